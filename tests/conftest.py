"""Shared test configuration.

Hypothesis profiles:
- ``ci`` (used when CI=true): derandomized, so a run is reproducible from the commit alone,
  with a bounded number of examples and a generous deadline for a 2-core machine.
- ``dev`` (default elsewhere): random exploration, Hypothesis's usual example count.
Pick one explicitly with HYPOTHESIS_PROFILE=ci|dev|thorough.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO_ROOT = Path(__file__).resolve().parent.parent

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=50,
    deadline=timedelta(seconds=5),
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=timedelta(seconds=2))
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") == "true" else "dev")
)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's root folder (lessons/, labs/, grading/ live here)."""
    return REPO_ROOT
