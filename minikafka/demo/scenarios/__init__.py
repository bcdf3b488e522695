"""The scripted scenarios, in the order `minikafka demo --list` shows them."""

from __future__ import annotations

from ..scenario import Scenario
from . import acks, compaction, elr, failover, isr, rebalance, transactions

SCENARIOS: dict[str, Scenario] = {
    s.name: s for s in (failover.SCENARIO, acks.SCENARIO, isr.SCENARIO, elr.SCENARIO,
                        rebalance.SCENARIO, compaction.SCENARIO, transactions.SCENARIO)
}
DEFAULT = failover.SCENARIO.name


def get(name: str) -> Scenario:
    """The scenario called `name`; KeyError lists the known ones."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise KeyError(f"no scenario {name!r}; known: {', '.join(SCENARIOS)}") from None


def listing() -> str:
    """One line per scenario: name, then summary (what --list prints)."""
    width = max(len(n) for n in SCENARIOS)
    return "\n".join(f"{s.name:<{width}}  {s.summary}" for s in SCENARIOS.values())
