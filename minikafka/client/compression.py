"""The compression codec table, now minikafka.codecs (the wire and the storage use it
too); this name stays while minikafka.dump still imports it from here."""

from __future__ import annotations

from ..codecs import CODECS

__all__ = ["CODECS"]
