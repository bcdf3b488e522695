"""A comparison's own native cluster, started while minikafka's half of the comparison runs."""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

from minikafka.realkafka.nodes import NativeKafka


@contextlib.contextmanager
def started_meanwhile(kafka: NativeKafka) -> Iterator[Callable[[], float]]:
    """KAFKA's nodes start in a thread while the block runs; call what it yields to wait
    until they answer. At the end, once the start has finished (so that no node outlives
    the test), they are killed: the test's data goes with its temporary folder."""
    with ThreadPoolExecutor(1) as pool:
        starting = pool.submit(kafka.up)
        try:
            yield starting.result
        finally:
            with contextlib.suppress(Exception):
                starting.result()
            kafka.down(kill=True)
