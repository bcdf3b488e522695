"""What the share-group handlers (KIP-932, keys 76-79 and 90) share: topic ids both ways,
acknowledgement batches from the wire, and records as the bytes they are stored as."""
from __future__ import annotations

from typing import Any
from uuid import UUID

from ...core.share.partition import AcknowledgementBatch
from ..batches import write_batch
from ._common import topic_name_for_id, topic_uuid

NO_ID = UUID(int=0)


def topic_id(cluster: Any, name: str) -> UUID:
    meta = cluster.controller.topics.get(name)
    return topic_uuid(meta) if meta is not None else NO_ID


def topic_name(cluster: Any, key: UUID | None) -> str | None:
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
