"""KafkaAdminClient for a minikafka Cluster: kafka-python's admin methods, plus the
course's view of kafka-consumer-groups.sh (describe with lag, reset-offsets).

    admin = cluster.admin()
    admin.list_groups()                       # kafka-python 3.x names and shapes ...
    admin.list_consumer_groups()              # ... and the 2.x names still in tutorials
    for row in admin.describe_consumer_group("billing"):
        print(row.topic, row.partition, row.current_offset, row.log_end_offset, row.lag)
    admin.reset_offsets("billing", shift_by=-2)               # dry run: the plan only
    admin.reset_offsets("billing", shift_by=-2, execute=True)

Like the tool, a reset is refused while the group has members; it only changes where
the group will start, the next time a consumer of it joins.

One module a group of calls: topics, configs (and quotas), ACLs, transactions,
operations (offsets, records, log dirs, quorum, features), groups, and legacy (the
kafka-python 2.x names); base holds what they share.
"""

from __future__ import annotations

from ...core.group_command import PartitionLag, format_describe
from .acls import AclsAdmin
from .configs import ConfigsAdmin
from .legacy import GroupInformation, KafkaPython2Names, MemberInformation
from .topics import TopicsAdmin
from .transactions import TransactionsAdmin

__all__ = ["GroupInformation", "KafkaAdminClient", "MemberInformation", "PartitionLag",
           "format_describe"]


class KafkaAdminClient(TopicsAdmin, ConfigsAdmin, AclsAdmin, TransactionsAdmin,
                       KafkaPython2Names):
    """kafka-python's KafkaAdminClient, in process: the same method names and results."""
