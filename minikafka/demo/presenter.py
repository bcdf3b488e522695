"""The presenter's timeline over one scenario: Next, Back, Reset, injected faults.

The state shown is a pure function of the actions taken so far: the scenario's steps
in order, with any injected faults between them. Next and a fault append an action;
Back removes the last one; Reset removes them all. A state is reached by running those
actions on a fresh, seeded cluster (or by continuing the current one when it is already
a prefix of them), so Back is an exact replay, never an undo. Each state is a `Frame`
(minikafka.viz.frame) drawn into the page's JSON; those are cached by the action list, so
going back and forth over recorded states costs a dictionary lookup.

Thread-safe: the HTTP handlers and the autoplay thread share one Presenter.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from kafka.errors import KafkaError

from .faults import FAULTS
from .frame import page, run_frame
from .scenario import Diverged, Run, Scenario

STEP = ("step",)
Action = tuple  # STEP, or ("fault", kind, broker)
CACHE_SIZE = 128


class _Facts(dict):
    """Narration fields: a fact a step could not compute reads '?' instead of failing."""

    def __missing__(self, key: str) -> str:
        return "?"


def narrate(template: str, facts: dict[str, Any]) -> str:
    return template.format_map(_Facts(facts))


class Presenter:
    def __init__(self, scenario: Scenario, *, cache: bool = True) -> None:
        self.scenario = scenario
        self.actions: list[Action] = []
        self.playing = False
        self.version = 0  # bumps on every change; the page polls it
        self.lock = threading.RLock()
        self._cache = cache
        self._pages: OrderedDict[tuple, dict[str, Any]] = OrderedDict()
        self._run: Run | None = None
        self._applied: list[Action] = []  # the actions self._run has taken
        self._said: list[str] = []  # narration after each applied action

    # -- where we are -----------------------------------------------------------------
    @property
    def step(self) -> int:
        """Scripted steps taken (0: the state after set-up)."""
        return sum(1 for a in self.actions if a == STEP)

    @property
    def total(self) -> int:
        return len(self.scenario.steps)

    # -- commands -----------------------------------------------------------------------
    def next(self) -> bool:
        with self.lock:
            if self.step >= self.total:
                return False
            return self._push(STEP)

    def back(self) -> bool:
        with self.lock:
            if not self.actions:
                return False
            self.actions.pop()
            self._changed()
            return True

    def reset(self) -> None:
        with self.lock:
            self.actions.clear()
            self.playing = False
            self._changed()

    def inject(self, kind: str, broker: int | None = None) -> bool:
        """Add a fault (see faults.FAULTS) at the current point of the scenario."""
        fault = FAULTS.get(kind)
        if fault is None:
            raise ValueError(f"unknown fault {kind!r}; known: {', '.join(FAULTS)}")
        if fault.per_broker:
            if broker is None or broker not in self._current_run().cluster.brokers:
                raise ValueError(f"fault {kind!r} needs a broker id")
        else:
            broker = None
        with self.lock:
            return self._push(("fault", kind, broker))

    def set_playing(self, playing: bool) -> None:
        with self.lock:
            self.playing = playing and self.step < self.total
            self._changed()

    # -- the state the page draws -------------------------------------------------------
    def state(self) -> dict[str, Any]:
        with self.lock:
            drawn = self._page(tuple(self.actions))
            s = self.scenario
            return {
                **drawn,
                "mode": "scenario",
                "scenario": s.name,
                "title": s.title,
                "step": self.step,
                "steps": self.total,
                "version": self.version,
                "playing": self.playing,
                "can_back": bool(self.actions),
                "can_next": self.step < self.total,
                "injected": [f"{a[1]} {a[2]}" if a[2] is not None else a[1]
                             for a in self.actions if a[0] == "fault"],
                "faults": {k: {"button": f.button, "per_broker": f.per_broker}
                           for k, f in FAULTS.items()},
            }

    # -- plumbing -----------------------------------------------------------------------
    def _push(self, action: Action) -> bool:
        self.actions.append(action)
        self._page(tuple(self.actions))  # run it now, so errors show at once
        self._changed()
        return True

    def _changed(self) -> None:
        self.version += 1

    def _page(self, key: tuple) -> dict[str, Any]:
        """The page's JSON for the state after the actions `key`."""
        if self._cache and key in self._pages:
            self._pages.move_to_end(key)
            return self._pages[key]
        run = self._run_to(list(key))
        drawn = page(run_frame(run, self._said[-1]), [run.watch[0]],
                     columns=self.scenario.columns)
        if self._cache:
            self._pages[key] = drawn
            if len(self._pages) > CACHE_SIZE:
                self._pages.popitem(last=False)
        return drawn

    def _current_run(self) -> Run:
        with self.lock:
            return self._run_to(list(self.actions))

    def _run_to(self, actions: list[Action]) -> Run:
        """A run that has taken exactly `actions`: the current one continued when it is
        a prefix, else a fresh replay from the seed."""
        if self._run is None or actions[:len(self._applied)] != self._applied:
            self._run = Run(self.scenario)
            self.scenario.setup(self._run)
            self._applied = []
            self._said = [narrate(self.scenario.intro, self._run.facts)]
        for action in actions[len(self._applied):]:
            self._said.append(self._apply(self._run, action))
            self._applied.append(action)
        return self._run

    def _apply(self, run: Run, action: Action) -> str:
        """Run one action and return its narration."""
        with run.cluster.lock:
            if action == STEP:
                number = sum(1 for a in self._applied if a == STEP)
                step = self.scenario.steps[number]
                try:
                    if step.do is not None:
                        step.do(run)
                except Diverged as exc:
                    return (f"⚠ After the injected faults the cluster did not follow the "
                            f"script ({exc}). Press Back to undo them.")
                except (KafkaError, ValueError, KeyError) as exc:
                    # Injected faults can leave the cluster where a step cannot run as
                    # written; say so instead of failing the page.
                    return (f"⚠ This step could not run as scripted after the injected "
                            f"faults ({type(exc).__name__}). Press Back to undo them.")
                return narrate(step.say, run.facts)
            _, kind, broker = action
            fault = FAULTS[kind]
            try:
                result = fault.apply(run, broker)
            except (KafkaError, ValueError) as exc:
                return f"⚠ {fault.button} failed: {type(exc).__name__}: {exc}"
            return "⚡ " + fault.say.format(broker=broker, result=result)
