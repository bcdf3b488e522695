"""The minikafka course's nbgrader assignments and the instructor pipeline around them.

    python -m grading --help

This directory is an nbgrader course (nbgrader_config.py, source/<assignment>/); the modules
here drive nbgrader's own API for each step and add what it lacks: importing an LMS export,
reporting edited test cells, a per-question CSV and an end-to-end self-test.
"""

from pathlib import Path

COURSE_DIR = Path(__file__).resolve().parent
