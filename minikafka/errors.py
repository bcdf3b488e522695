"""kafka-python's exception classes for Kafka's error codes.

minikafka raises the same classes a real cluster makes kafka-python raise, so a
student's `except NotEnoughReplicasError:` works unchanged against real Kafka.
"""

from __future__ import annotations

import kafka.errors as _kerrors
from kafka.errors import *  # noqa: F403  (re-exported for `from minikafka.errors import ...`)
from kafka.errors import KafkaError

from .core.errors import KafkaCoreError


def for_code(code: int, message: str = "") -> KafkaError:
    """An instance of kafka-python's class for a Kafka error code."""
    cls = _kerrors.for_code(code)
    return cls(message) if message else cls()


def translate(exc: KafkaCoreError) -> KafkaError:
    return for_code(exc.code, exc.message)

