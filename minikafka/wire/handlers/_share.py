"""What the share-group handlers (KIP-932, keys 76-79 and 90) share: topic ids both ways,
acknowledgement batches from the wire, and records as the bytes they are stored as."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from uuid import UUID

from ...core.errors import UNKNOWN_TOPIC_ID
from ...core.share.partition import AcknowledgementBatch
from ..batches import write_batch
from ._common import topic_name_for_id, topic_uuid

if TYPE_CHECKING:
    from ...core.api.port import ClusterPort

NO_ID = UUID(int=0)


def topic_id(cluster: ClusterPort, name: str) -> UUID:
    meta = cluster.controller.topics.get(name)
    return topic_uuid(meta) if meta is not None else NO_ID


def topic_name(cluster: ClusterPort, key: UUID | None) -> str | None:
    return topic_name_for_id(cluster, key or NO_ID)


def acknowledgements(batches: Any) -> list[AcknowledgementBatch]:
    return [AcknowledgementBatch(b.first_offset, b.last_offset, tuple(b.acknowledge_types))
            for b in batches or ()]


def records_bytes(batches: list) -> bytes | None:
    if not batches:
        return None
    out: list = []
    for batch in batches:
        write_batch(out, batch)
    return b"".join(out)


def known_acknowledgements(ctx: Any, topics: Any) -> tuple[dict, list]:
    """A ShareFetch's or ShareAcknowledge's topics: ({(topic, partition): acknowledgement
    batches} of the topics the cluster knows, for core.api.share to authorize, and
    [(topic id, partition, UNKNOWN_TOPIC_ID)] of an id it does not know."""
    known: dict[tuple[str, int], list] = {}
    unknown: list[tuple] = []
    for topic in topics:
        name = topic_name(ctx.cluster, topic.topic_id)
        for p in topic.partitions:
            if name is None:
                unknown.append((topic.topic_id, p.partition_index, UNKNOWN_TOPIC_ID))
            else:
                known[(name, p.partition_index)] = acknowledgements(p.acknowledgement_batches)
    return known, unknown

