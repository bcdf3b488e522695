"""`python -m grading <command>`: the instructor pipeline, one command per step.

    generate   student versions in release/ (refused if a solution or hidden test leaks)
    release    put them in the exchange for `nbgrader fetch_assignment`
    collect    take students' `nbgrader submit`s from the exchange into submitted/
    import     or take a folder or zip exported by an LMS into submitted/
    autograde  run every submission in a sandbox, record scores, report edited test cells
               and the integrity findings
    feedback   HTML feedback per student (optionally released to the exchange)
    export     per-question scores as CSV
    formgrader start JupyterLab in the course for manual grading (Nbgrader > Formgrader)
    selftest   the whole pipeline on every assignment in a temporary copy
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from . import COURSE_DIR, course


def _api(args):
    return course.make_api(Path(args.course))


def _assignments(args) -> list[str]:
    known = course.assignments(Path(args.course))
    chosen = args.assignment or known
    unknown = [a for a in chosen if a not in known]
    if unknown:
        raise SystemExit(f"unknown assignment(s) {unknown}; the course has {known}")
    return chosen


def cmd_list(args) -> int:
    root = Path(args.course)
    print(f"course {root}")
    for a in course.assignments(root):
        released = (root / "release" / a).is_dir()
        submitted = len(list((root / "submitted").glob(f"*/{a}")))
        graded = len(list((root / "autograded").glob(f"*/{a}")))
        print(f"  {a:22} released: {'yes' if released else 'no ':3}  submitted: {submitted:3}  "
              f"autograded: {graded:3}")
    return 0


def cmd_generate(args) -> int:
    from . import pipeline
    api = _api(args)
    for a in _assignments(args):
        path = pipeline.generate(api, a)
        print(f"{a}: student version in {path} (no solution or hidden test in it)")
    return 0


def cmd_release(args) -> int:
    from . import pipeline
    api = _api(args)
    for a in _assignments(args):
        pipeline.release(api, a, force=args.force)
        print(f"{a}: released to the exchange {pipeline.ensure_exchange(api)}")
    return 0


def cmd_collect(args) -> int:
    from . import integrity, pipeline
    api = _api(args)
    for a in _assignments(args):
        report = pipeline.collect(api, a, single_user=args.single_user)
        for student, reason in report.refused:
            print(f"  refused: {integrity.escape(student)}: {integrity.escape(reason)}")
        print(f"{a}: {len(report.students)} submission(s) in submitted/, "
              f"{len(report.refused)} refused")
    return 0


def cmd_import(args) -> int:
    from . import lms
    try:
        report = lms.import_submissions(Path(args.course), args.assignment, Path(args.source),
                                        layout=args.layout, pattern=args.pattern,
                                        roster=Path(args.roster))
    except lms.RosterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for student, name in sorted(report.imported.items()):
        print(f"  {student:24} {name}")
    for line in report.skipped:
        print(f"  skipped {line}")
    print(f"{args.assignment}: imported {len(report.imported)} submission(s), "
          f"skipped {len(report.skipped)} file(s)")
    return 0 if report.imported else 1


def _report_edits(root: Path, assignment: str) -> int:
    from . import integrity
    edits = integrity.edited_locked_cells(root, assignment)
    for edit in edits:
        print(f"  locked cell changed: {edit} (restored before grading)")
    return len(edits)


def cmd_autograde(args) -> int:
    from . import pipeline, sandbox
    api = _api(args)
    failed = 0
    isolation = None if args.unsandboxed else args.sandbox
    try:
        if isolation is not None:
            isolation = sandbox.available(isolation)
    except sandbox.SandboxUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("isolation: " + sandbox.describe(isolation or "none", sandbox.Limits()), flush=True)
    for a in _assignments(args):
        students = args.student or pipeline.submitted_students(api, a)
        print(f"{a}: autograding {len(students)} submission(s)")
        report = pipeline.autograde(
            api, a, students, jobs=args.jobs, isolation=isolation,
            progress=lambda s, ok: print(f"  {s:24} {'graded' if ok else 'FAILED'}", flush=True))
        for student, log in report.failed.items():
            print(f"--- {student} ---\n{log.strip()}")
        failed += len(report.failed)
        _report_edits(Path(args.course), a)
        _report_integrity(Path(args.course), a)
    return 1 if failed else 0


def _report_integrity(root: Path, assignment: str) -> int:
    from . import integrity
    findings = integrity.integrity_report(root, assignment)
    for finding in findings:
        print(f"  integrity: {finding}")
    path = integrity.write_report(root, assignment, findings)
    print(f"{assignment}: {len(findings)} integrity finding(s), report in {path}")
    return len(findings)


def cmd_check(args) -> int:
    found = sum(_report_edits(Path(args.course), a)
                for a in _assignments(args))
    print(f"{found} edited locked cell(s)")
    for a in _assignments(args):
        _report_integrity(Path(args.course), a)
    return 0


def cmd_feedback(args) -> int:
    from . import pipeline
    api = _api(args)
    for a in _assignments(args):
        html = pipeline.feedback(api, a, release_to_exchange=args.release)
        print(f"{a}: {len(html)} feedback file(s) in feedback/"
              + (" and released to the exchange" if args.release else ""))
    return 0


def cmd_export(args) -> int:
    from . import integrity, scores
    api = _api(args)
    root = Path(args.course)
    out = Path(args.output) if args.output else root / "grades"
    out.mkdir(parents=True, exist_ok=True)
    for a in _assignments(args):
        edits: dict[str, list[str]] = {}
        for e in integrity.edited_locked_cells(root, a):
            edits.setdefault(e.student, []).append(e.cell)
        path = scores.write_csv(out / f"scores-{a}.csv",
                                scores.questions(root, api.coursedir.db_url, a),
                                scores.student_scores(api.coursedir.db_url, a), edits)
        print(f"{a}: {path}")
    return 0


def cmd_formgrader(args) -> int:
    print("Starting JupyterLab in the course directory; open Nbgrader > Formgrader "
          "(manual grading, per-question scores, feedback).", flush=True)
    return subprocess.call(formgrader_command(args.lab_args), cwd=args.course)


def formgrader_command(extra: list[str]) -> list[str]:
    """JupyterLab from this environment; nbgrader's formgrader reads the course's
    nbgrader_config.py from the directory the server starts in."""
    jupyter = Path(sys.executable).with_name("jupyter")
    command = [str(jupyter) if jupyter.exists() else "jupyter", "lab", *extra]
    if hasattr(os, "getuid") and os.getuid() == 0 and "--allow-root" not in command:
        command.append("--allow-root")  # containers often run as root
    return command


def cmd_selftest(args) -> int:
    from .selftest import format_table, run
    ok, rows = run(args.assignment or None, Path(args.keep) if args.keep else None,
                   jobs=args.jobs)
    print(format_table(rows))
    print("selftest passed" if ok else "selftest FAILED")
    return 0 if ok else 1


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m grading", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--course", default=os.environ.get("GRADING_COURSE", str(COURSE_DIR)),
                   help="the nbgrader course directory (default: %(default)s)")
    sub = p.add_subparsers(dest="command", required=True)

    def add(name, fn, help_text, assignments=True):
        s = sub.add_parser(name, help=help_text, description=help_text)
        if assignments:
            s.add_argument("assignment", nargs="*", help="assignment id(s); default: all")
        s.set_defaults(fn=fn)
        return s

    add("list", cmd_list, "assignments and how far each has got", assignments=False)
    add("generate", cmd_generate, "make the student versions (nbgrader generate_assignment)")
    add("release", cmd_release, "release to the exchange (nbgrader release_assignment)") \
        .add_argument("--force", action="store_true", help="replace an earlier release")
    add("collect", cmd_collect, "collect submissions from the exchange (nbgrader collect)") \
        .add_argument("--single-user", action="store_true",
                      help="the whole class shares this Unix account: accept submissions it "
                      "owns (otherwise each must be owned by the student it names)")
    imp = add("import", cmd_import, "import an LMS export (folder or zip) into submitted/",
              assignments=False)
    imp.add_argument("assignment", help="assignment id")
    imp.add_argument("source", help="folder or .zip as the LMS exported it")
    imp.add_argument("--layout", choices=["canvas", "moodle", "folders"], default="canvas")
    imp.add_argument("--pattern", help="regex over each file's path with a (?P<student>...) "
                     "group, instead of a layout")
    imp.add_argument("--roster", required=True,
                     help="CSV with lms_id (the LMS's student id) and student_id columns")
    ag = add("autograde", cmd_autograde, "autograde submissions (nbgrader autograde)")
    ag.add_argument("--student", action="append", help="only this student (repeatable)")
    ag.add_argument("--jobs", type=int, default=1,
                    help="grade this many submissions at once (one sandbox each)")
    ag.add_argument("--sandbox", choices=["auto", "bwrap", "docker"], default="auto",
                    help="where students' code runs (default: bubblewrap if it works here, "
                    "else Docker; grading stops when neither does)")
    ag.add_argument("--unsandboxed", action="store_true",
                    help="run students' code in a plain kernel as the grading user, with no "
                    "isolation (only for code you trust)")
    add("check", cmd_check, "report edited locked cells and the integrity findings")
    add("feedback", cmd_feedback, "HTML feedback (nbgrader generate_feedback)") \
        .add_argument("--release", action="store_true",
                      help="also release it to the exchange (nbgrader release_feedback)")
    add("export", cmd_export, "per-question scores as CSV, one file per assignment") \
        .add_argument("-o", "--output", help="folder for scores-<assignment>.csv "
                      "(default: grades/ in the course)")
    fg = add("formgrader", cmd_formgrader, "JupyterLab in the course for the formgrader",
             assignments=False)
    fg.add_argument("lab_args", nargs=argparse.REMAINDER, help="passed to jupyter lab")
    st = add("selftest", cmd_selftest, "the whole pipeline end to end on each assignment")
    st.add_argument("--keep", help="work in this folder and keep it (default: a temp dir)")
    st.add_argument("--jobs", type=int, default=2,
                    help="assignment groups run in parallel processes (default: %(default)s)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from .pipeline import PipelineError
    try:
        return args.fn(args)
    except PipelineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
