"""Sandboxed against unsandboxed autograde: seconds per submission on one batch.

    .venv/bin/python tests/benchmarks/grading_throughput.py [--n 50] [--assignment a1_partitions]
                                                            [--jobs 1] [--rounds 1]

In a temporary copy of the course, N submissions (a third each the instructor's solution, the
self-test's wrong answer and the blank) are autograded through `grading.pipeline.autograde`
twice in the same run: in nbgrader's own kernel (--unsandboxed, the old path) and in the
bubblewrap sandbox (the answers', the visible calls' and the hidden calls' sandboxes per
submission, the verdicts made in the grading process). Prints the median seconds per submission of each (per round, over the
rounds), and the ratio sandboxed / unsandboxed (the goal: <= 1.5). Run it from two checkouts
to compare two versions; the machine's load moves both numbers of one run alike.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import nbformat

from grading import course, pipeline, sandbox
from grading.selftest import runner, submissions, wrong


def make_submissions(root: Path, assignment: str, n: int) -> list[str]:
    names = []
    for source in course.source_notebooks(root, assignment):
        released = nbformat.read(root / "release" / assignment / source.name, as_version=4)
        variants = [submissions.with_solutions(released, nbformat.read(source, as_version=4)),
                    submissions.with_answers(released, {
                        k: v for k, v in wrong.for_assignment(assignment).CELLS.items()
                        if k in {c.metadata.get("nbgrader", {}).get("grade_id")
                                 for c in released.cells}}),
                    released]
        for i in range(n):
            student = f"s{i:03d}"
            folder = course.submitted_dir(root, student, assignment)
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(variants[i % 3], folder / source.name)
            names.append(student)
    return sorted(set(names))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=50, help="submissions in the batch")
    p.add_argument("--assignment", default="a1_partitions")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--rounds", type=int, default=1)
    args = p.parse_args()
    mode = sandbox.available("auto")
    with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
        root = runner.copy_course(Path(tmp) / "course", [args.assignment])
        os.environ["GRADING_DB_URL"] = f"sqlite:///{root / 'gradebook.db'}"
        api = course.make_api(root)
        pipeline.generate(api, args.assignment)
        students = make_submissions(root, args.assignment, args.n)
        per: dict[str, list[float]] = {"unsandboxed": [], mode: []}
        for _ in range(args.rounds):
            for label, isolation in (("unsandboxed", None), (mode, mode)):
                started = time.monotonic()
                report = pipeline.autograde(api, args.assignment, students, jobs=args.jobs,
                                            isolation=isolation)
                seconds = (time.monotonic() - started) / len(students)
                per[label].append(seconds)
                print(f"{label:12} {seconds:6.2f} s/submission ({len(report.graded)} graded, "
                      f"{len(report.failed)} failed)", flush=True)
    base, boxed = statistics.median(per["unsandboxed"]), statistics.median(per[mode])
    print(f"\n{args.assignment}, {args.n} submissions, jobs {args.jobs}, load "
          f"{os.getloadavg()[0]:.1f}")
    print(f"median unsandboxed {base:.2f} s, {mode} {boxed:.2f} s per submission: "
          f"ratio {boxed / base:.2f} (goal <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
