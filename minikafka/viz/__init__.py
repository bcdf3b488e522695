"""Pictures of a minikafka cluster (graphviz) and widget panels over a live one.

Renderers are pure: plain data in (a `Cluster.snapshot()`, a `log_state()`, a group
description dict, journal steps), a `graphviz.Digraph` out; `to_svg()` draws one.
`minikafka.viz.panels.Panel` puts them behind ipywidgets controls.
Nothing else in minikafka imports this package.
"""

from .clusterview import ReplicaState, cluster_view, replica_states
from .groupview import group_description, group_rows, group_view
from .logstate import log_state
from .logview import log_view, partition_log_view
from .sequence import Step, produce_sequence, produce_sequence_view, sequence_view
from .svg import has_dot, to_svg

__all__ = [
    "ReplicaState",
    "Step",
    "cluster_view",
    "group_description",
    "group_rows",
    "group_view",
    "has_dot",
    "log_state",
    "log_view",
    "partition_log_view",
    "produce_sequence",
    "produce_sequence_view",
    "replica_states",
    "sequence_view",
    "to_svg",
]
