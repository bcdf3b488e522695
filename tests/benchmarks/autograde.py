"""Autograde throughput: seconds per submission for a class of 30, against nbgrader alone.

    .venv/bin/python tests/benchmarks/autograde.py [--n 30] [--assignment a1_partitions]
                                                   [--jobs 1 2] [--baseline 10]

In a temporary copy of the course: N submissions of the assignment (a third each the
instructor's solution, the self-test's wrong answer and the blank) are autograded through
`grading.pipeline.autograde`, once per --jobs value. nbgrader's own cost is measured in the
same run on a trivial one-cell assignment, so the ratio compares like with like on this
machine (the design notes measured about 2.6 s per submission for nbgrader alone).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from grading import course, pipeline
from grading.selftest import runner, submissions, wrong

TRIVIAL = "trivial"


def trivial_assignment(root: Path) -> None:
    """One solution cell and one 1-point test: what any nbgrader assignment costs."""
    answer = new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION")
    answer.metadata["nbgrader"] = {"grade": False, "grade_id": "answer", "locked": False,
                                   "schema_version": 3, "solution": True, "task": False}
    test = new_code_cell("assert x == 1")
    test.metadata["nbgrader"] = {"grade": True, "grade_id": "test", "locked": True, "points": 1,
                                 "schema_version": 3, "solution": False, "task": False}
    nb = new_notebook(cells=[answer, test])
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    (root / "source" / TRIVIAL).mkdir(parents=True)
    nbformat.write(nb, root / "source" / TRIVIAL / "trivial.ipynb")


def submit(root: Path, assignment: str, students: list[str], variants: list) -> None:
    for student, make in zip(students, variants):
        dest = root / "submitted" / student / assignment
        dest.mkdir(parents=True, exist_ok=True)
        for source in course.source_notebooks(root, assignment):
            released = nbformat.read(root / "release" / assignment / source.name, as_version=4)
            nbformat.write(make(released, nbformat.read(source, as_version=4)), dest / source.name)
        (dest / "timestamp.txt").write_text("2026-01-01 12:00:00.000000 UTC")


def timed_autograde(api, assignment: str, students: list[str], jobs: int) -> float:
    start = time.perf_counter()
    report = pipeline.autograde(api, assignment, students, jobs=jobs)
    elapsed = time.perf_counter() - start
    if report.failed:
        raise SystemExit(f"autograde failed for {sorted(report.failed)}")
    return elapsed / len(students)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30, help="submissions to grade")
    parser.add_argument("--assignment", default="a1_partitions")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--baseline", type=int, default=10,
                        help="trivial submissions for nbgrader's own cost")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
        root = runner.copy_course(Path(tmp) / "course", [args.assignment])
        trivial_assignment(root)
        api = course.make_api(root)
        for a in (args.assignment, TRIVIAL):
            pipeline.generate(api, a)

        answers = wrong.for_assignment(args.assignment).CELLS
        kinds = [lambda rel, src: submissions.with_solutions(rel, src),
                 lambda rel, src: submissions.with_answers(
                     rel, {k: v for k, v in answers.items()
                           if k in {c.metadata.get("nbgrader", {}).get("grade_id") for c in rel.cells}}),
                 lambda rel, src: rel]
        results = []
        trivial_students = [f"t{i:03d}" for i in range(args.baseline)]
        submit(root, TRIVIAL, trivial_students,
               [lambda rel, src: submissions.with_solutions(rel, src)] * args.baseline)
        baseline = timed_autograde(api, TRIVIAL, trivial_students, 1)
        results.append(("nbgrader alone (trivial notebook)", 1, args.baseline, baseline))
        for jobs in args.jobs:
            students = [f"j{jobs}-s{i:03d}" for i in range(args.n)]
            submit(root, args.assignment, students, [kinds[i % 3] for i in range(args.n)])
            results.append((args.assignment, jobs, args.n,
                            timed_autograde(api, args.assignment, students, jobs)))
            shutil.rmtree(root / "autograded", ignore_errors=True)
    cores, load = os.cpu_count(), os.getloadavg()[0]
    print(f"\n{cores} cores, load average {load:.1f} at the end (other work slows every row alike)")
    print(f"{'what':36} {'jobs':>4} {'subs':>5} {'s/submission':>13} {'vs nbgrader alone':>18}")
    for what, jobs, n, per in results:
        print(f"{what:36} {jobs:>4} {n:>5} {per:>13.2f} {per / baseline:>17.2f}x")


if __name__ == "__main__":
    main()
