"""Exactly-once with transactions: a transactional producer's records are invisible to
read_committed consumers until the commit marker; aborted records stay in the log but
read_committed consumers skip them. read_uncommitted consumers see everything."""

from __future__ import annotations

from ..scenario import Run, Scenario, Step

TXN_ID = "ledger-writer"


def setup(run: Run) -> None:
    run.cluster.create_topic("ledger", partitions=1, replication_factor=3,
                             config={"min.insync.replicas": "2"})
    run.cluster.advance(100)
    _reads(run)


def _producer(run: Run) -> object:
    return run.producer("all", transactional_id=TXN_ID)


def _send(run: Run, values: list[str]) -> None:
    producer = _producer(run)
    for v in values:
        producer.send("ledger", value=v.encode(), partition=0)
    producer.flush()


def _reads(run: Run) -> None:
    """What each isolation level returns when reading the partition from the start."""
    for level in ("read_uncommitted", "read_committed"):
        values = run.read(level)
        run.notes[level] = " ".join(values) if values else "(nothing)"


def _settle(run: Run) -> None:
    run.cluster.advance(200)
    d = run.partition()
    run.facts.update(lso=d.last_stable_offset, hw=d.high_watermark)
    _reads(run)


def init(run: Run) -> None:
    producer = _producer(run)
    producer.init_transactions()
    producer.begin_transaction()
    _send(run, ["a1", "a2", "a3"])
    _settle(run)


def commit(run: Run) -> None:
    _producer(run).commit_transaction()
    _settle(run)


def open_second(run: Run) -> None:
    producer = _producer(run)
    producer.begin_transaction()
    _send(run, ["b1", "b2"])
    _settle(run)


def abort(run: Run) -> None:
    _producer(run).abort_transaction()
    _settle(run)


def third(run: Run) -> None:
    producer = _producer(run)
    producer.begin_transaction()
    _send(run, ["c1", "c2"])
    producer.commit_transaction()
    _settle(run)


SCENARIO = Scenario(
    name="transactions",
    title="Exactly-once with transactions",
    summary="commit and abort: read_committed sees only committed records, "
            "read_uncommitted sees them all",
    topic="ledger",
    setup=setup,
    columns=10,
    intro="Topic ledger, one partition. A producer with transactional.id=" + TXN_ID +
          " writes; two consumers read it from the start, one read_uncommitted, one "
          "read_committed.",
    steps=(
        Step("The producer registers its transactional.id (initTransactions), begins a "
             "transaction and writes a1 a2 a3. They are in the log and replicated (HW {hw}) "
             "but the last stable offset (LSO) stays at {lso}: read_committed sees nothing.",
             init),
        Step("commitTransaction: the coordinator writes a COMMIT marker (✦) to the partition. "
             "The LSO moves to {lso}; read_committed now returns a1 a2 a3.", commit),
        Step("A second transaction writes b1 b2 and stays open. read_uncommitted already "
             "returns them; read_committed stops at the LSO ({lso}).", open_second),
        Step("abortTransaction: an ABORT marker. b1 b2 stay in the log (✗) but "
             "read_committed consumers skip them for ever.", abort),
        Step("A third transaction writes c1 c2 and commits. read_committed sees each "
             "committed record exactly once and never an aborted one.", third),
    ),
)
