"""A lab's scratch directory (checkpoints, parquet, SQLite)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def work_dir(lab: str, *, fresh: bool = True) -> Path:
    """A lab's scratch directory (checkpoints, parquet, SQLite), emptied when `fresh`.
    Under the system's temp directory unless MINIKAFKA_LAB_DIR says where."""
    root = Path(os.environ.get("MINIKAFKA_LAB_DIR") or Path(tempfile.gettempdir()) / "kafka-labs")
    path = root / lab
    if fresh and path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    return path
