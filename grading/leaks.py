"""Does a released (student) notebook give away a solution or a hidden test?

nbgrader strips the regions between ### BEGIN SOLUTION / ### END SOLUTION and
### BEGIN HIDDEN TESTS / ### END HIDDEN TESTS. This check does not trust that alone: it
also looks for any substantial line of those regions in the released notebook, which
catches a solution pasted outside its markers or a typo in a marker.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
# Anything that looks like a marker, typos included ("BEGIN HIDDEN TEST", "END SOLUTON"):
# nbgrader ignores a misspelt marker and ships what it was meant to hide.
_MARKER_LIKE = re.compile(r"^[ \t]*#+[ \t]*((?:BEGIN|END)[ \t]+(?:SOL\w*|HIDDEN\w*(?:[ \t]+TEST\w*)?"
                          r"|MARK[ \t]*SCHEME))", re.IGNORECASE | re.MULTILINE)
_EXACT = {*MARKERS, "BEGIN MARK SCHEME", "END MARK SCHEME"}
_REGION = re.compile(
    r"^[ \t]*(?:#+[ \t]*)?BEGIN (SOLUTION|HIDDEN TESTS)[ \t]*$(.*?)^[ \t]*(?:#+[ \t]*)?END \1[ \t]*$",
    re.MULTILINE | re.DOTALL)
MIN_LINE = 12  # shorter lines ("return x", "pass") are too generic to count as a leak


def secret_lines(source: str) -> tuple[set[str], set[str]]:
    """(lines inside solution/hidden regions, lines outside them) of one source text."""
    inside: set[str] = set()
    for match in _REGION.finditer(source):
        inside.update(line.strip() for line in match.group(2).splitlines())
    outside = {line.strip() for line in _REGION.sub("", source).splitlines()}
    return inside, outside


def find_leaks(source_nb: Path, released_nb: Path) -> list[str]:
    """Problems with one released notebook, empty when it is clean."""
    source = nbformat.read(source_nb, as_version=4)
    released = nbformat.read(released_nb, as_version=4)
    secrets: set[str] = set()
    public: set[str] = set()
    for cell in source.cells:
        inside, outside = secret_lines(cell.source)
        secrets |= inside
        public |= outside
    secrets = {s for s in secrets - public if len(s) >= MIN_LINE and not s.startswith("#")}
    problems = []
    for index, cell in enumerate(source.cells):
        for found in _MARKER_LIKE.findall(cell.source):
            if " ".join(found.upper().split()) not in _EXACT:
                problems.append(f"{source_nb.name} cell {index}: misspelt marker {found!r}")
    for index, cell in enumerate(released.cells):
        where = f"{released_nb.name} cell {index}"
        for found in _MARKER_LIKE.findall(cell.source):
            problems.append(f"{where}: marker {found!r} left in the student version")
        for line in cell.source.splitlines():
            if line.strip() in secrets:
                problems.append(f"{where}: solution or hidden-test line {line.strip()!r}")
        for output in cell.get("outputs", []):
            problems.append(f"{where}: has {output.get('output_type')} output (outputs can show answers)")
    return problems


def check_assignment(root: Path, assignment: str) -> list[str]:
    """Problems in release/<assignment>/ against source/<assignment>/."""
    problems = []
    for source_nb in sorted((root / "source" / assignment).glob("*.ipynb")):
        released_nb = root / "release" / assignment / source_nb.name
        if not released_nb.exists():
            problems.append(f"{released_nb} is missing")
            continue
        problems.extend(find_leaks(source_nb, released_nb))
    return problems
