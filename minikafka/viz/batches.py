"""One record batch as the log stores it: the header fields of Kafka's RecordBatch v2,
the records inside it, and its size before and after compression.

`batch_anatomy()` reads a batch from a partition's leader log; `batch_view()` draws it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import graphviz

from minikafka.core.records import BATCH_OVERHEAD, COMPRESSION_NAMES, record_size

from .html import clip, td
from .palette import BLACK, BLUE, BLUISH_GREEN, FONT, LIGHT_GREY, ORANGE, WHITE

if TYPE_CHECKING:
    from ..cluster import Cluster


def _text(data: bytes | None, n: int) -> str:
    if data is None:
        return "null"
    try:
        return clip(data.decode("utf-8"), n)
    except UnicodeDecodeError:
        return clip(data.hex(), n)


def batch_anatomy(cluster: Cluster, topic: str, partition: int, index: int = 0) -> dict[str, Any]:
    """Batch number `index` of the partition's leader log (negative counts from the end),
    as plain data: its header fields (Kafka's names), its records (offset and timestamp
    deltas, key, value, size) and its uncompressed and stored sizes in bytes."""
    replica = cluster.leader_replica(topic, partition)
    batch = list(replica.log.batches())[index]
    records = [{"offset_delta": d, "timestamp_delta": ts - batch.first_timestamp,
                "key": _text(k, 12), "value": _text(v, 40), "bytes": record_size(k, v, h)}
               for d, ts, k, v, h in batch.records]
    uncompressed = BATCH_OVERHEAD + sum(r["bytes"] for r in records)
    return {
        "topic": topic, "partition": partition,
        "header": {
            "baseOffset": batch.base_offset,
            "batchLength": batch.size_bytes,
            "partitionLeaderEpoch": batch.partition_leader_epoch,
            "magic": 2,
            "attributes": f"compression={COMPRESSION_NAMES.get(batch.compression, '?')}"
                          f"{', transactional' if batch.is_transactional else ''}"
                          f"{', control' if batch.is_control else ''}",
            "lastOffsetDelta": batch.last_offset_delta,
            "baseTimestamp": batch.first_timestamp,
            "maxTimestamp": batch.max_timestamp,
            "producerId": batch.producer_id,
            "producerEpoch": batch.producer_epoch,
            "baseSequence": batch.base_sequence,
            "recordsCount": batch.record_count,
        },
        "compression": COMPRESSION_NAMES.get(batch.compression, "?"),
        "records": records,
        "uncompressed_bytes": uncompressed,
        "stored_bytes": batch.size_bytes,
    }


def batch_view(anatomy: Mapping[str, Any], *, max_records: int = 6) -> graphviz.Digraph:
    """The header (field, value), the first `max_records` records, and two bars whose
    lengths are the batch's uncompressed and stored sizes."""
    header = anatomy["header"]
    records = anatomy["records"]
    rows = ["<TR>" + td(f"one batch of {anatomy['topic']}-{anatomy['partition']}: "
                        f"{len(records)} records, compression {anatomy['compression']}",
                        colspan=5, border=0, bold=True, point=12, align="LEFT") + "</TR>",
            "<TR>" + td("batch header (61 bytes, once per batch)", colspan=5, fill=BLUE,
                        color=WHITE, bold=True, point=10, align="LEFT") + "</TR>"]
    items = list(header.items())
    half = -(-len(items) // 2)
    for left, right in zip(items[:half], items[half:] + [("", "")]):
        rows.append("<TR>" + td(left[0], point=10, align="LEFT", fill=LIGHT_GREY)
                    + td(str(left[1]), point=10, align="LEFT", bold=True)
                    + td("", border=0, width=8, height=18)
                    + td(right[0], point=10, align="LEFT", fill=LIGHT_GREY if right[0] else None,
                         border=1 if right[0] else 0)
                    + td(str(right[1]), point=10, align="LEFT", bold=True,
                         border=1 if right[0] else 0) + "</TR>")
    title = f"records ({'compressed together' if anatomy['compression'] != 'none' else 'not compressed'})"
    rows.append("<TR>" + td(title, colspan=5, fill=BLUISH_GREEN, color=WHITE, bold=True,
                            point=10, align="LEFT") + "</TR>")
    rows.append("<TR>" + "".join(td(h, point=10, bold=True, fill=LIGHT_GREY, align=a)
                                 for h, a in (("offsetDelta", "RIGHT"),
                                              ("timestampDelta", "RIGHT"))) +
                td("", border=0) + td("key", point=10, bold=True, fill=LIGHT_GREY, align="LEFT")
                + td("value · bytes", point=10, bold=True, fill=LIGHT_GREY, align="LEFT")
                + "</TR>")
    for r in records[:max_records]:
        rows.append("<TR>" + td(str(r["offset_delta"]), point=10, align="RIGHT")
                    + td(f"+{r['timestamp_delta']} ms", point=10, align="RIGHT")
                    + td("", border=0) + td(r["key"], point=10, align="LEFT")
                    + td(f"{clip(r['value'], 24)} · {r['bytes']} B", point=10, align="LEFT")
                    + "</TR>")
    if len(records) > max_records:
        rows.append("<TR>" + td(f"… {len(records) - max_records} more records", colspan=5,
                                point=10, border=0, italic=True, align="LEFT") + "</TR>")
    raw, stored = anatomy["uncompressed_bytes"], anatomy["stored_bytes"]
    full = 250
    for word, size, colour in (("uncompressed", raw, ORANGE), ("stored", stored, BLUISH_GREEN)):
        width = max(4, round(full * size / max(raw, stored)))
        # Bar and caption share a fixed width, so both bars start at the same place.
        caption = td(f" {size:,} bytes", width=full + 90 - width, height=14, point=10,
                     border=0, align="LEFT", color=BLACK)
        bar = ('<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="0"><TR>'
               + td("", width=width, height=14, fill=colour, border=0) + caption
               + "</TR></TABLE>")
        rows.append("<TR>" + td(word, point=10, border=0, bold=True, align="RIGHT", colspan=2)
                    + td("", border=0) + f'<TD COLSPAN="2" BORDER="0" ALIGN="LEFT">{bar}</TD>'
                    + "</TR>")
    ratio = raw / stored if stored else 0
    left = '<BR ALIGN="LEFT"/>'  # two lines: one long line would set the picture's width
    rows.append("<TR>" + td(f"ratio {ratio:.2f}: the codec compresses the records of the "
                            f"whole batch together,{left}so fuller batches shrink more{left}",
                            raw=True, colspan=5, border=0, point=10, align="LEFT") + "</TR>")
    g = graphviz.Digraph("batch", graph_attr={"fontname": FONT},
                         node_attr={"shape": "plain", "fontname": FONT})
    g.node("batch", '<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">'
                    + "".join(rows) + "</TABLE>>")
    return g
