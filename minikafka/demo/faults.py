"""The live fault buttons: extra faults the presenter injects between scripted steps.

Each is data (what the button says, what the narration says, what it does), and an
injected fault is recorded like a step, so Back undoes it and replays stay exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .scenario import Run


@dataclass(frozen=True)
class Fault:
    button: str
    say: str  # narration; {broker} and {result} are filled in
    apply: Callable[[Run, int | None], str]  # returns the {result} text
    per_broker: bool = True


def _stop(run: Run, b: int | None) -> str:
    run.cluster.stop_broker(b)
    run.cluster.advance(1_000)
    return ""


def _crash(run: Run, b: int | None) -> str:
    run.cluster.crash_broker(b)
    run.cluster.advance(1_000)
    return str(run.cluster.broker_config["broker.session.timeout.ms"] // 1000)


def _start(run: Run, b: int | None) -> str:
    run.cluster.start_broker(b)
    run.cluster.advance(5_000)
    return ""


def _slow(run: Run, b: int | None) -> str:
    run.cluster.slow_follower(b, 60_000)
    return ""


def _heal(run: Run, b: int | None) -> str:
    for broker in run.cluster.broker_ids:
        run.cluster.resume_follower(broker)
    run.cluster.advance(2_000)
    return ""


def _wait(run: Run, b: int | None) -> str:
    run.cluster.advance(10_000)
    return ""


def _produce(run: Run, b: int | None) -> str:
    start = run.sent_count
    return str(run.produce([f"x{start + i}" for i in range(3)], acks="all", wait_ms=2_000))


FAULTS: dict[str, Fault] = {
    "stop": Fault("stop", "You stopped broker {broker} cleanly (controlled shutdown): its "
                  "leaderships moved away before it went.", _stop),
    "crash": Fault("crash", "You crashed broker {broker} (kill -9). The controller notices "
                   "only after broker.session.timeout.ms ({result} s): press +10 s.", _crash),
    "start": Fault("start", "Broker {broker} started: it registers, catches up from the "
                   "leaders and rejoins the ISR.", _start),
    "slow": Fault("slow", "Broker {broker} now takes 60 s per fetch. Produce, then wait: it "
                  "leaves the ISR after replica.lag.time.max.ms.", _slow),
    "heal": Fault("heal followers", "Every follower fetches at full speed again.", _heal,
                  per_broker=False),
    "wait": Fault("+10 s", "10 s of simulated time passed.", _wait, per_broker=False),
    "produce": Fault("produce 3", "You produced 3 records with acks=all: {result}.", _produce,
                     per_broker=False),
}
