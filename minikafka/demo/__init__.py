"""The instructor's presenter page: `minikafka demo`.

Scripted scenarios (`scenarios/`, each a seeded cluster and steps of narration plus an
action) are stepped by a `Presenter`, whose state is replayed from the seed on Back;
`LiveView` shows a running cluster instead. `DemoServer` serves either to a small static
page (standard-library HTTP, graphviz SVG, plain JavaScript) that keeps no state of its
own, so a reload shows the same step.
"""
from ..extras import require

require("course", "graphviz", what="minikafka demo (the presenter page)")

from .presenter import Presenter
from .scenario import Run, Scenario, Step
from .scenarios import SCENARIOS, listing
from .server import DemoServer

__all__ = ["SCENARIOS", "DemoServer", "Presenter", "Run", "Scenario", "Step", "listing"]
