"""The lessons' "On a real cluster" cells: kafka-python's own clients, complete, against
a served minikafka cluster (the notebook tests run them; these check they are there and
that the server they use behaves)."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest
from kafka import KafkaAdminClient, KafkaProducer

from minikafka.course.served import real_cluster

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
# The lessons that teach a client's behaviour, and the client classes each one shows.
CLIENT_LESSONS = {"03": {"KafkaProducer"}, "05": {"KafkaProducer"},
                  "06": {"KafkaProducer", "KafkaConsumer"}, "07": {"KafkaProducer"},
                  "08": {"KafkaConsumer"}, "09": {"KafkaConsumer"},
                  "10": {"KafkaConsumer"}}


@pytest.mark.parametrize("lesson", sorted(CLIENT_LESSONS))
def test_client_lessons_show_the_real_code_once(lesson: str) -> None:
    path = next(LESSONS.glob(f"{lesson}-*.ipynb"))
    cells = nbformat.read(path, as_version=4).cells
    heads = [i for i, c in enumerate(cells)
             if c.cell_type == "markdown" and c.source.startswith("## On a real cluster")]
    assert len(heads) == 1
    code = cells[heads[0] + 1]
    assert code.cell_type == "code"
    tree = ast.parse(code.source)
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and n.module == "kafka" for a in n.names}
    assert CLIENT_LESSONS[lesson] <= imported
    # Built from kafka-python's own classes, against the served cluster's address.
    built = {n.func.id: {k.arg for k in n.keywords} for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id in ("KafkaProducer", "KafkaConsumer")}
    assert all("bootstrap_servers" in kw for kw in built.values())
    assert "real_cluster(" in code.source and "with " in code.source
    # It must not rebind a name a later cell (the hidden check) still reads.
    read_later = set().union(*(free_names(ast.parse(c.source)) for c in cells[heads[0] + 2:]
                               if c.cell_type == "code"))
    assert not cell_names(tree) & read_later, cell_names(tree) & read_later


SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


def _walk_cell_scope(node: ast.AST):
    """The nodes in a cell's own scope: comprehensions and lambdas have their own."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, SCOPES):
            yield child
            yield from _walk_cell_scope(child)


def cell_names(tree: ast.AST) -> set[str]:
    """Names a cell binds in the notebook's namespace."""
    return {n.id for n in _walk_cell_scope(tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def free_names(tree: ast.AST) -> set[str]:
    """Names a cell reads that it does not bind itself first (roughly: any it reads and
    does not bind at all)."""
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
             and isinstance(n.ctx, ast.Store)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)} - bound


def test_real_cluster_serves_its_topics_with_their_configs() -> None:
    with real_cluster(topics={"payments": 2}, configs={"payments": {"min.insync.replicas": "2"}}) \
            as server:
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap_servers)
        try:
            described = admin.describe_topics(["payments"])[0]
        finally:
            admin.close()
        assert len(described["partitions"]) == 2
        assert all(len(p["replica_nodes"]) == 3 for p in described["partitions"])
        assert server.cluster.topic_config("payments")["min.insync.replicas"] == 2
        producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers, acks="all")
        assert producer.send("payments", b"x", partition=1).get(timeout=30).offset == 0
        producer.close()
    assert not server.running


def test_two_kafka_python_members_polled_side_by_side_share_the_partitions_every_time() -> None:
    """Lesson 9's served group: each member in a thread of its own settles 3 + 3, run after
    run (one loop taking turns with 100 ms polls left one member empty in some runs)."""
    from kafka import KafkaConsumer

    from minikafka.course.served import poll_side_by_side

    for run in range(5):
        with real_cluster(topics={"trucks_gps": 6}, seed=run,
                          broker_config={"group.initial.rebalance.delay.ms": 0}) as server:
            members = [KafkaConsumer("trucks_gps", bootstrap_servers=server.bootstrap_servers,
                                     group_id="dashboard", group_instance_id=f"dashboard-{n}",
                                     heartbeat_interval_ms=500) for n in (1, 2)]
            try:
                settled = poll_side_by_side(
                    members, until=lambda group=members: all(len(m.assignment()) == 3
                                                             for m in group),
                    timeout_s=20)
                shares = sorted(sorted(tp.partition for tp in m.assignment()) for m in members)
            finally:
                for member in members:
                    member.close()
        assert settled and shares == [[0, 1, 2], [3, 4, 5]], (run, shares)
