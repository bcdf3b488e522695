"""kafka-consumer-groups' describe, lag and reset (minikafka.core.group_command) through
both doors, as the same principal (User:alice over SASL/PLAIN): the in-process admin's
describe_consumer_group, lag, total_lag and reset_offsets, and the tool's port over
kafka-python (tools/consumer_groups.WireGroupPort, what ``minikafka consumer-groups``
runs). Both ask the core.api entries the wire handlers call, so alice is refused, or
answered, the same way by each:

- the group: DESCRIBE for ConsumerGroupDescribe, DescribeGroups and OffsetFetch (and
  FindCoordinator on the wire), READ for the reset's OffsetCommit;
- the topics: DESCRIBE for ListOffsets and Metadata, an all-topics OffsetFetch leaving
  out those alice may not DESCRIBE, ConsumerGroupDescribe refusing a group whose members
  own one (TOPIC_AUTHORIZATION_FAILED), READ for the commit;
- a KIP-848 group is described with ConsumerGroupDescribe, and its reset refused while
  it has members (NON_EMPTY_GROUP, before anything is committed).

Kafka's tool fails a whole describe or reset on any of these (its ListOffsets and
describeTopics calls take all().get()), as both doors do here."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from kafka.admin import ACL, ACLOperation, ACLPermissionType, ResourcePattern, ResourceType
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata, TopicPartition

from minikafka import errors as kerrors
from minikafka.cluster import Cluster
from minikafka.core import api, errors, group_command
from minikafka.core.api import authz
from minikafka.core.groups.consumer_protocol import ConsumerHeartbeat
from minikafka.core.security_config import client_listeners
from minikafka.tools.consumer_groups import WireGroupPort

from .doors import BROKERS, SEED, Door, InProcess, through_both
from .test_parity import same_everywhere
from .test_parity_acls import ADMIN, ALICE, PROPERTIES

pytestmark = [pytest.mark.interop, pytest.mark.timeout(180)]

GROUP = "billing"
PAID, SECRET = TopicPartition("paid", 0), TopicPartition("secret", 0)
COMMITTED = {PAID: 2, SECRET: 3}  # of five records in each
Grant = tuple[ACLOperation, ResourceType, str]
DESCRIBE_GROUP: Grant = (ACLOperation.DESCRIBE, ResourceType.GROUP, GROUP)
READ_GROUP: Grant = (ACLOperation.READ, ResourceType.GROUP, GROUP)
DESCRIBE_PAID: Grant = (ACLOperation.DESCRIBE, ResourceType.TOPIC, "paid")
READ_PAID: Grant = (ACLOperation.READ, ResourceType.TOPIC, "paid")
READ_SECRET: Grant = (ACLOperation.READ, ResourceType.TOPIC, "secret")


def secured_cluster() -> Cluster:
    """ACLs on (User:admin a super user), alice and admin known to both doors, topics
    `paid` and `secret` of one partition."""
    cluster = Cluster(brokers=BROKERS, seed=SEED)
    cluster.enable_acls(super_users=["User:admin"])
    for user in ("admin", "alice"):
        cluster.set_scram_credential(user, f"{user}-secret")
    for topic in ("paid", "secret"):
        cluster.create_topic(topic, partitions=1, replication_factor=1)
    return cluster


def _kip848_member(cluster: Cluster) -> None:
    """User:admin's KIP-848 member m-1 of GROUP, assigned paid-0 and secret-0."""
    answer = api.consumer_group_heartbeat(cluster, authz.Caller("User:admin"), None,
                                          ConsumerHeartbeat(
        GROUP, "m-1", 0, rebalance_timeout_ms=30_000, subscribed_topic_names=("paid", "secret"),
        owned=(), client_id="door", client_host="/127.0.0.1"))
    assert answer.error == errors.NONE and answer.assignment


def outcome(call: Callable[[], Any]) -> Any:
    """What the call returned, or the kafka-python class name of what it raised (a
    refusal of the tool's by its Kafka error code)."""
    try:
        return call()
    except KafkaError as exc:
        return type(exc).__name__
    except group_command.GroupCommandError as exc:
        return type(kerrors.for_code(exc.code)).__name__


def rows(found: list[group_command.PartitionLag]) -> list[tuple]:
    return [(r.topic, r.partition, r.current_offset, r.log_end_offset, r.lag, r.consumer_id)
            for r in found]


def plan(found: dict) -> dict[str, int]:
    return {f"{tp.topic}-{tp.partition}": offset for tp, offset in found.items()}


class Tool:
    """kafka-consumer-groups through one door, as alice."""

    def __init__(self, door: Door) -> None:
        self.admin = door.admin(**ALICE)
        self.in_process = door.name == InProcess.name

    def describe(self) -> list[tuple]:
        if self.in_process:
            return rows(self.admin.describe_consumer_group(GROUP))
        return rows(group_command.describe(WireGroupPort(self.admin), GROUP).rows)

    def lag(self) -> dict[str, int | None]:
        """The in-process admin's lag(); on the wire, the tool's LAG column."""
        if self.in_process:
            return {f"{tp.topic}-{tp.partition}": v for tp, v in self.admin.lag(GROUP).items()}
        return {f"{r[0]}-{r[1]}": r[4] for r in self.describe()}

    def total_lag(self) -> int:
        if self.in_process:
            return self.admin.total_lag(GROUP)
        return sum(v for v in self.lag().values() if v is not None)

    def reset(self, topics: list[str] | None, execute: bool = False) -> dict[str, int]:
        """--reset-offsets --to-earliest (--all-topics for None)."""
        if self.in_process:
            return plan(self.admin.reset_offsets(GROUP, topics, to_earliest=True,
                                                 execute=execute))
        return plan(group_command.reset_offsets(
            WireGroupPort(self.admin), GROUP, topics, group_command.Scenario(to_earliest=True),
            now_ms=0, execute=execute))


def observe(grants: tuple[Grant, ...], setup: Callable[[Cluster], None] | None = None,
            commit: bool = True) -> dict[str, Any]:
    """What alice, with `grants`, sees through each door after the admin wrote five
    records to each topic and (with `commit`) committed COMMITTED for the empty group;
    `setup` then runs on the cluster."""
    def scenario(door: Door) -> dict[str, Any]:
        producer = door.producer(**ADMIN)
        for tp in (PAID, SECRET):
            for i in range(5):
                producer.send(tp.topic, f"r{i}".encode(), partition=tp.partition)
        producer.flush(timeout=10)
        admin = door.admin(**ADMIN)
        if commit:
            assert all(e.errno == 0 for e in admin.alter_group_offsets(
                GROUP, {tp: OffsetAndMetadata(o, "", -1) for tp, o in COMMITTED.items()}
            ).values())
        admin.create_acls([ACL("User:alice", "*", operation, ACLPermissionType.ALLOW,
                               ResourcePattern(kind, name)) for operation, kind, name in grants])
        if setup is not None:
            door.setup(setup)
        tool = Tool(door)
        seen = {"describe": outcome(tool.describe), "lag": outcome(tool.lag),
                "total_lag": outcome(tool.total_lag),
                "reset": outcome(lambda: tool.reset(None)),
                "reset secret": outcome(lambda: tool.reset(["secret"])),
                "reset secret:0": outcome(lambda: tool.reset(["secret:0"])),
                "reset --execute": outcome(lambda: tool.reset(None, execute=True))}
        committed = door.setup(lambda c: c.groups.offset_fetch(None, GROUP, None)[1])
        seen["committed after"] = {f"{t}-{p}": c.offset for (t, p), c in sorted(committed.items())}
        return seen

    return same_everywhere(through_both(scenario, secured_cluster, client_listeners(PROPERTIES)))


BEFORE = {"paid-0": 2, "secret-0": 3}
GROUP_REFUSED = "GroupAuthorizationFailedError"
TOPIC_REFUSED = "TopicAuthorizationFailedError"


def test_without_describe_on_the_group_alice_is_refused_everything() -> None:
    refused = dict.fromkeys(["describe", "lag", "total_lag", "reset", "reset secret",
                             "reset secret:0", "reset --execute"], GROUP_REFUSED)
    assert observe(()) == {**refused, "committed after": BEFORE}


def test_an_unknown_group_is_refused_before_it_is_found_unknown() -> None:
    """Without DESCRIBE alice may not learn that the group does not exist; with it the
    tool says so, and a reset of a group never seen plans nothing."""
    assert observe((), commit=False)["describe"] == GROUP_REFUSED
    seen = observe((DESCRIBE_GROUP,), commit=False)
    assert (seen["describe"], seen["reset"], seen["committed after"]) == \
        ("GroupIdNotFoundError", {}, {})


def test_describe_shows_only_the_topics_alice_may_describe_and_a_reset_needs_read() -> None:
    """OffsetFetch for all topics leaves secret out; ListOffsets and Metadata refuse it
    by name; the commit needs READ on the group."""
    seen = observe((DESCRIBE_GROUP, DESCRIBE_PAID))
    assert seen == {
        "describe": [("paid", 0, 2, 5, 3, None)], "lag": {"paid-0": 3}, "total_lag": 3,
        "reset": {"paid-0": 0}, "reset secret": TOPIC_REFUSED,
        "reset secret:0": TOPIC_REFUSED, "reset --execute": GROUP_REFUSED,
        "committed after": BEFORE}


def test_with_read_on_the_group_and_its_topics_alice_describes_and_resets() -> None:
    seen = observe((READ_GROUP, READ_PAID, READ_SECRET))
    assert seen == {
        "describe": [("paid", 0, 2, 5, 3, None), ("secret", 0, 3, 5, 2, None)],
        "lag": {"paid-0": 3, "secret-0": 2}, "total_lag": 5,
        "reset": {"paid-0": 0, "secret-0": 0}, "reset secret": {"secret-0": 0},
        "reset secret:0": {"secret-0": 0}, "reset --execute": {"paid-0": 0, "secret-0": 0},
        "committed after": {"paid-0": 0, "secret-0": 0}}


def test_an_active_kip848_group_is_described_and_its_reset_refused_up_front() -> None:
    """ConsumerGroupDescribe describes the group (DescribeGroups calls it Dead), and the
    reset is refused with NON_EMPTY_GROUP before any commit is tried."""
    seen = observe((READ_GROUP, READ_PAID, READ_SECRET), _kip848_member)
    assert seen == {
        "describe": [("paid", 0, 2, 5, 3, "m-1"), ("secret", 0, 3, 5, 2, "m-1")],
        "lag": {"paid-0": 3, "secret-0": 2}, "total_lag": 5,
        **dict.fromkeys(["reset", "reset secret", "reset secret:0", "reset --execute"],
                        "NonEmptyGroupError"),
        "committed after": BEFORE}


def test_a_kip848_group_owning_a_topic_alice_may_not_describe_is_refused_whole() -> None:
    """ConsumerGroupDescribe answers TOPIC_AUTHORIZATION_FAILED rather than show whose
    partitions secret's are (core.api.consumer_group_describe)."""
    seen = observe((READ_GROUP, READ_PAID), _kip848_member)
    assert {k: seen[k] for k in ("describe", "lag", "total_lag", "reset")} == \
        dict.fromkeys(("describe", "lag", "total_lag", "reset"), TOPIC_REFUSED)
    assert seen["committed after"] == BEFORE
