"""How long the lessons take under nbmake, against the course's budget of 8 s a lesson.

    .venv/bin/python tests/benchmarks/lessons_time.py            # all lessons
    .venv/bin/python tests/benchmarks/lessons_time.py 04 05      # some lessons

Runs ``pytest --nbmake`` on the lessons once, in one process, and prints seconds per
lesson, marked OVER past 8 s (pytest's own per-test durations: a fresh kernel, every cell,
the kernel's shutdown), their sum, pytest's wall time from start to finish, the CPU time of
pytest and its kernels, and the machine's load average, since other work on a 2-core
machine slows every kernel start.
Exits 1 when a lesson fails or passes its budget, or the total passes the budget.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

BUDGET_S = 60.0
LESSON_BUDGET_S = 8.0
ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "lessons"


def main(argv: list[str]) -> int:
    paths = sorted(LESSONS.glob("[0-9][0-9]-*.ipynb"))
    if argv:
        paths = [p for p in paths if p.stem[:2] in argv]
    load = os.getloadavg()[0]
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbmake", "-q", "-p", "no:cacheprovider",
         "--durations=0", "--durations-min=0", *map(str, paths)],
        cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    per_lesson: dict[str, float] = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)s (call|setup|teardown)\s+lessons/(\S+?)\.ipynb", line)
        if m:
            per_lesson[m.group(3)] = per_lesson.get(m.group(3), 0.0) + float(m.group(1))
    failed = proc.returncode != 0
    print(f"{'lesson':45s} seconds")
    for name in sorted(per_lesson):
        over = "  OVER" if per_lesson[name] > LESSON_BUDGET_S else ""
        print(f"{name:45s} {per_lesson[name]:7.2f}{over}")
    total = sum(per_lesson.values())
    print(f"{'total (sum of lessons)':45s} {total:7.2f}")
    print(f"{'pytest --nbmake wall time':45s} {wall:7.2f}")
    print(f"{'CPU seconds (pytest and every kernel)':45s} {cpu:7.2f}")
    print(f"budget {BUDGET_S:.0f} s: {'within' if wall <= BUDGET_S else 'OVER'} "
          f"(load average at start {load:.2f} on {os.cpu_count()} cores; other work on the "
          "machine stretches the wall time, not the CPU time)")
    if failed:
        print(proc.stdout[-3000:], proc.stderr[-2000:], sep="\n")
    slow = any(t > LESSON_BUDGET_S for t in per_lesson.values())
    return 1 if failed or slow or wall > BUDGET_S else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
