"""./test.sh runs the suite on pytest-xdist workers with `--dist loadgroup`: every test of a
native Kafka cluster must land in one of its two groups (a cluster per worker that runs one,
its ports taken once), and no other test may, or that worker would carry the whole suite."""
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
    assert groups_of(items) == [["native_kafka"], ["native_kafka_fidelity"], ["native_kafka"],
                                [], [], []]


def test_each_worker_runs_its_own_cluster_on_ports_of_its_own() -> None:
    ports = [conftest.worker_kafka_port(f"gw{n}") for n in range(4)]
    assert conftest.worker_kafka_port(None) == ports[0] == conftest.BASE_KAFKA_PORT
    # a cluster takes port .. port + 2, + 10000 and + 20001 (each for three nodes)
    taken = [{p + d + n for d in (0, 10000, 20001) for n in range(3)} for p in ports]
    assert all(not (a & b) for i, a in enumerate(taken) for b in taken[i + 1:])
    fixed = {conftest.BASE_KAFKA_PORT + offset + d + n for offset in (10, 20, 40, 60)
             for d in (0, 10000, 20001) for n in range(3)}  # the checks with nodes of their own
    docker = {19392, 19393, 19394}  # tests/test_docker_cluster.py's compose cluster
    assert not any(t & (fixed | docker) for t in taken)


def test_without_xdist_nothing_is_marked() -> None:
    # --strict-markers would reject xdist_group where pytest-xdist is not installed
    assert groups_of([FakeItem("tests/fidelity/test_fidelity.py")], xdist=False) == [[]]


def test_the_test_command_runs_workers_by_group() -> None:
    script = (Path(conftest.REPO_ROOT) / "test.sh").read_text()
    assert "--dist loadgroup" in script and '-n "${MINIKAFKA_TEST_WORKERS:-2}"' in script
