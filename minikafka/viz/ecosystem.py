"""The ecosystem lesson's two chains, as stages for `pipeline_view` to draw.

`connect_state()`: a file, the FileStreamSource connector (its offset beside it, in
connect-offsets), the topic, the FileStreamSink connector and the file it writes.
`streams_state()`: the word count's topology: the input topic, the split step, the
repartition topic, the count step with its state store and changelog beside it, and the
output topic. Each stage carries the numbers the cluster and the application hold now.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .pipeline import committed_total, topic_records

if TYPE_CHECKING:
    from ..cluster import Cluster


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def connect_state(cluster: Cluster, source: Any, sink: Any) -> dict[str, Any]:
    """Stages for a FileSource -> topic -> FileSink chain (minikafka.course.connect)."""
    topic = source.topic
    stages = [
        {"name": f"file {source.file.name}", "kind": "store",
         "lines": [f"{_lines(source.file)} lines"]},
        {"name": f"source connector {source.name}", "kind": "connector",
         "lines": [f"FileStreamSource · {source.config.get('tasks.max', '1')} task",
                   f"source offset: byte {source.position}"]},
        {"name": f"topic {topic}", "kind": "topic",
         "lines": [f"{cluster.partitions_for(topic)} partitions · "
                   f"{topic_records(cluster, topic)} records"]},
        {"name": f"sink connector {sink.name}", "kind": "connector",
         "lines": [f"FileStreamSink · group {sink.group_id}",
                   f"committed offsets sum to {committed_total(cluster, sink.group_id)}"]},
        {"name": f"file {sink.file.name}", "kind": "store",
         "lines": [f"{_lines(sink.file)} lines"]},
    ]
    side = [{"name": f"topic {source.offsets_topic}", "kind": "topic", "of": stages[1]["name"],
             "lines": [f"compacted · {topic_records(cluster, source.offsets_topic)} records"]}]
    return {"stages": stages, "side": side}


def streams_state(app: Any) -> dict[str, Any]:
    """Stages for the word count (minikafka.course.streams.WordCount)."""
    cluster = app.cluster

    def topic(name: str, note: str = "") -> dict[str, Any]:
        return {"name": f"topic {name}", "kind": "topic",
                "lines": [f"{cluster.partitions_for(name)} partitions · "
                          f"{topic_records(cluster, name)} records{note}"]}

    stages = [
        topic(app.source),
        {"name": "split into words, key by word", "kind": "app",
         "lines": ["flatMapValues + groupBy (sub-topology 0)"]},
        topic(app.repartition, " (internal)"),
        {"name": "count", "kind": "app",
         "lines": ["count (sub-topology 1)",
                   f"group {app.application_id}: offsets sum to "
                   f"{committed_total(cluster, app.application_id)}"]},
        topic(app.sink),
    ]
    words = sum(len(t) for t in app.store.values())
    side = [{"name": "state store counts", "kind": "store", "of": stages[3]["name"],
             "label": "state",
             "lines": [f"{words} words, {sum(app.counts().values())} counted",
                       f"backed up to {app.changelog}: "
                       f"{topic_records(cluster, app.changelog)} records, compacted"]}]
    return {"stages": stages, "side": side}
