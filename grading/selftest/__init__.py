"""The end-to-end self-test of the grading pipeline (see runner.py)."""

from .runner import format_table, run

__all__ = ["format_table", "run"]
