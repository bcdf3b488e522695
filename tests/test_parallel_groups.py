"""./test.sh runs the suite on pytest-xdist workers with `--dist loadgroup`: every test of the
native Kafka cluster must land in one group (one cluster per run, its ports taken once), and
no other test may, or that one worker would carry the whole suite."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import conftest
import pytest


class FakeItem:
    def __init__(self, path: str, fixturenames: tuple[str, ...] = ()) -> None:
        self.path = conftest.REPO_ROOT / path
        self.fixturenames = fixturenames
        self.markers: list[pytest.Mark] = []

    def add_marker(self, marker: pytest.MarkDecorator) -> None:
        self.markers.append(marker.mark)


def groups_of(items: list[FakeItem], *, xdist: bool = True) -> list[list[str]]:
    config = SimpleNamespace(pluginmanager=SimpleNamespace(hasplugin=lambda name: xdist),
                             option=SimpleNamespace())
    hook = conftest.pytest_collection_modifyitems(config, items)
    next(hook)  # the part before the other plugins' hooks: the marks
    return [[m.args[0] for m in item.markers if m.name == "xdist_group"] for item in items]


def test_the_native_cluster_tests_share_one_group() -> None:
    items = [
        FakeItem("tests/test_labs.py", ("real_kafka", "real_kafka_session", "tmp_path")),
        FakeItem("tests/fidelity/test_fidelity.py", ("request",)),  # asks for real_door by name
        FakeItem("tests/realkafka/test_security_fidelity.py", ("tmp_path",)),  # its own nodes
        FakeItem("tests/test_labs.py", ("tmp_path", "monkeypatch")),
        FakeItem("tests/realkafka/test_kafka_tools.py", ("served",)),  # minikafka only
        FakeItem("tests/wire/test_serve.py"),
    ]
    assert groups_of(items) == [["native_kafka"]] * 3 + [[]] * 3


def test_without_xdist_nothing_is_marked() -> None:
    # --strict-markers would reject xdist_group where pytest-xdist is not installed
    assert groups_of([FakeItem("tests/fidelity/test_fidelity.py")], xdist=False) == [[]]


def test_the_test_command_runs_workers_by_group() -> None:
    script = (Path(conftest.REPO_ROOT) / "test.sh").read_text()
    assert "--dist loadgroup" in script and '-n "${MINIKAFKA_TEST_WORKERS:-2}"' in script
