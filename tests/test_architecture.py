"""docs/architecture.svg names every package and top-level module of minikafka, so the
picture the README links to cannot silently fall behind the code."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_picture_names_every_part_of_the_package():
    drawn = (ROOT / "docs" / "architecture.dot").read_text()
    svg = (ROOT / "docs" / "architecture.svg").read_text()
    parts = sorted(p.stem if p.is_file() else p.name
                   for p in (ROOT / "minikafka").iterdir()
                   if (p.suffix == ".py" and p.stem != "__init__")
                   or (p.is_dir() and (p / "__init__.py").exists()))
    missing = [name for name in parts if name not in drawn]
    assert not missing, f"docs/architecture.dot does not draw {missing}"
    assert all(name in svg for name in parts), "architecture.svg is older than architecture.dot"
