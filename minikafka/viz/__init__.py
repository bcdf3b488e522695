"""Pictures of a minikafka cluster (graphviz) and widget panels over a live one.

Renderers are pure: plain data in (a `Cluster.snapshot()`, a `log_state()`, a group
description dict, journal steps), a `graphviz.Digraph` out; `to_svg()` draws one.
`minikafka.viz.panels.Panel` puts them behind ipywidgets controls and records a
`minikafka.viz.frame.Frame` after each action: one picture of the cluster at one moment,
the same type the presenter page (`minikafka.demo`) draws.
Nothing else in minikafka imports this package.
"""
from ..extras import require

require("course", "graphviz", "ipywidgets", what="minikafka.viz (the lessons' pictures)")

from .acls import acl_matrix, acl_matrix_view
from .batches import batch_anatomy, batch_view
from .clusterview import ReplicaState, cluster_view, replica_states
from .deadletters import dead_letter_view
from .groupview import group_description, group_rows, group_view
from .keys import key_placement, key_placement_view
from .logstate import log_state
from .logview import log_view, partition_log_view
from .metricsview import MetricsDashboard, metrics_view
from .pipeline import pipeline_state, pipeline_view
from .positions import Sample, poll_commit_timeline, position_timeline_view
from .protocols import protocol_timeline_view
from .rebalance import rebalance_view
from .sequence import Step, produce_sequence, produce_sequence_view, sequence_view
from .sharepartition import share_partition_view
from .svg import has_dot, to_svg
from .tiers import tiered_log_view
from .transactions import transaction_state, transaction_view
from .windows import windows_view

__all__ = [
    "MetricsDashboard",
    "acl_matrix",
    "acl_matrix_view",
    "ReplicaState",
    "Sample",
    "Step",
    "batch_anatomy",
    "batch_view",
    "cluster_view",
    "dead_letter_view",
    "group_description",
    "group_rows",
    "group_view",
    "has_dot",
    "key_placement",
    "key_placement_view",
    "log_state",
    "log_view",
    "metrics_view",
    "partition_log_view",
    "pipeline_state",
    "pipeline_view",
    "poll_commit_timeline",
    "position_timeline_view",
    "produce_sequence",
    "protocol_timeline_view",
    "produce_sequence_view",
    "rebalance_view",
    "tiered_log_view",
    "replica_states",
    "sequence_view",
    "share_partition_view",
    "to_svg",
    "transaction_state",
    "transaction_view",
    "windows_view",
]
