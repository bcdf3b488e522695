"""Cluster's client factories (in-process producer, consumer, share consumer, admin;
serve for real clients over the wire) and settle_group for lessons with several consumers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .. import errors as kerrors
from ..core.groups.classic import STABLE as GROUP_STABLE
from ..core.groups.consumer import ConsumerGroup
from .base import ClusterBase


class ClientFactories(ClusterBase):
    def new_client_id(self, kind: str) -> str:
        """producer-1, consumer-1, ...: numbered per cluster, so histories repeat exactly."""
        self._client_seq[kind] = self._client_seq.get(kind, 0) + 1
        return f"{kind}-{self._client_seq[kind]}"

    # -- clients ------------------------------------------------------------------------
    def producer(self, **config: Any):
        """A KafkaProducer (kafka-python's keyword names) connected to this cluster."""
        from ..client.producer import KafkaProducer
        return KafkaProducer(self, **config)

    def consumer(self, *topics: str, **config: Any):
        """A KafkaConsumer (kafka-python's keyword names) connected to this cluster."""
        from ..client.consumer import KafkaConsumer
        return KafkaConsumer(self, *topics, **config)

    def share_consumer(self, group_id: str, topics: Iterable[str] | str = (), **config: Any):
        """A KafkaShareConsumer (KIP-932) in share group `group_id`, subscribed to `topics`."""
        from ..client.share_consumer import KafkaShareConsumer
        return KafkaShareConsumer(self, group_id, topics, **config)

    def admin(self, **config: Any):
        """A KafkaAdminClient (kafka-python's method names) connected to this cluster."""
        from ..client.admin import KafkaAdminClient
        return KafkaAdminClient(self, **config)


    def serve(self, port: int = 9092, host: str = "127.0.0.1", **options: Any):
        """Serve this cluster to real Kafka clients, one listener per broker on
        consecutive ports from `port`; returns the running server (a context manager).
        Hold `cluster.lock` around calls into the cluster while it is served. In the
        browser edition (no sockets) it stops the cell with one line saying so."""
        from ..browser import require

        require("a cluster served over the network (sockets)")
        from ..wire.serve import serve
        return serve(self, port=port, host=host, **options)



# kafka.structs.MemberState.STABLE, the state a consumer's group_metadata() reports once it
# has joined and needs no further round (the cluster does not import kafka-python).
MEMBER_STABLE = "<stable>"


def settle_group(consumers: Sequence[Any], timeout_ms: int = 120_000, poll_ms: int = 100
                 ) -> list[list]:
    """Poll each consumer in turn until their group is Stable with all of them in it.

    A rebalance only moves forward while its members poll, so a lesson or a test
    with several consumers in one thread polls them round-robin. Settled means the
    coordinator's group is Stable with exactly these members, and each consumer's
    group_metadata() says it is stable in that generation. Returns the records each
    consumer's polls returned (nothing is dropped).
    """
    if not consumers:
        return []
    cluster = consumers[0].cluster
    group_id = consumers[0].config["group_id"]
    deadline = cluster.now_ms + timeout_ms
    got: list[list] = [[] for _ in consumers]

    def settled() -> bool:
        group = cluster.groups.groups.get(group_id)
        if group is None or group.state != GROUP_STABLE:
            return False
        if isinstance(group, ConsumerGroup):  # KIP-848: each member at its target assignment
            members = [c._group for c in consumers]
            return {m.member_id for m in members} == set(group.members) and all(
                m.settled_in(group) for m in members)
        metas = [c.group_metadata() for c in consumers]
        return {m.member_id for m in metas} == set(group.members) and all(
            m.state == MEMBER_STABLE and m.generation_id == group.generation_id for m in metas)

    while True:
        for i, consumer in enumerate(consumers):
            for records in consumer.poll(timeout_ms=poll_ms).values():
                got[i].extend(records)
        if settled():
            return got
        if cluster.now_ms >= deadline:
            raise kerrors.KafkaTimeoutError(f"group {group_id} did not settle in {timeout_ms} ms")
