"""The example applications (minikafka.examples) and their pytest files under
lessons/examples, which lesson 16 shows as the way to test a Kafka application: the
example tests pass, run as a student runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(300)
def test_the_example_tests_pass() -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "--color=no",
                           str(ROOT / "lessons" / "examples" / "test_orders_app.py")],
                          capture_output=True, text=True, timeout=280, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("5 passed")


def test_with_retries_backs_off_and_gives_up() -> None:
    from minikafka.examples.orders_app import Pricing, TemporaryError, with_retries

    waits: list[float] = []
    pricing = Pricing(down={1})
    with pytest.raises(TemporaryError):
        with_retries(lambda: pricing({"id": 1, "amount": 1}), sleep=waits.append)
    assert waits == [0.1, 0.2, 0.4, 0.8] and pricing.calls == {1: 5}
    calls = []
    with pytest.raises(ValueError):  # not retried: a bad order stays bad
        with_retries(lambda: calls.append(1) or int("x"), sleep=waits.append)
    assert calls == [1]
