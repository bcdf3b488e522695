"""Share state on disk: what Kafka keeps in __share_group_state, as one JSON file.

A durable cluster (`minikafka serve --log-dir`) writes its share groups' state (each
share-partition's start offset, state epoch, and in-flight records' states and delivery
counts, plus the groups' own configs) to `<log-dir>/share-group-state.json` whenever it
changes (atomically: a crash leaves the old file or the new one).
A restart reads it back: a share group carries on from where it was, and records that
were acquired when it stopped are available again (their locks did not survive).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..storage import write_atomically

if TYPE_CHECKING:
    from .coordinator import ShareGroupCoordinator

FILE_NAME = "share-group-state.json"


def load(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}


def writer(path: Path) -> Callable[[ShareGroupCoordinator], None]:
    """A `persist` hook for the coordinator."""
    def persist(coordinator: ShareGroupCoordinator) -> None:
        write_atomically(path, json.dumps(coordinator.state(), sort_keys=True).encode())
    return persist
