"""kafka-python's log lines kept out of sight while minikafka's own tools talk to a cluster.

kafka-python logs every refused connection and failed request; a tool (the kafka-*.sh work-
alikes, `minikafka kafka status`) reports what went wrong itself, in one line. The quiet
lasts only as long as the tool runs: a notebook or a test that calls one keeps kafka-python's
logging as it had it.
"""
from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


@contextlib.contextmanager
def kafka_python_quiet() -> Iterator[None]:
    """No kafka-python log line reaches the root logger's handlers inside the block."""
    kafka_log = logging.getLogger("kafka")
    propagate, sink = kafka_log.propagate, logging.NullHandler()
    kafka_log.addHandler(sink)
    kafka_log.propagate = False
    try:
        yield
    finally:
        kafka_log.removeHandler(sink)
        kafka_log.propagate = propagate
