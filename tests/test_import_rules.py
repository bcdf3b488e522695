"""The layering rules of DESIGN.md, checked by reading every module's imports with ``ast``.

- ``minikafka.core`` imports only the standard library, a few small C helpers
  (``CORE_THIRD_PARTY``) and other ``minikafka.core`` modules. It is pure and deterministic,
  so it also stays away from asyncio, sockets, threads, wall-clock time and the global RNG.
- ``minikafka.cluster`` imports only ``minikafka.core`` and ``minikafka.errors`` (plus the
  same standard library and helpers) at module level. Its client factories
  (``cluster.producer()``, ``cluster.consumer()``) may import ``minikafka.client`` inside the
  function, and ``cluster.serve()`` ``minikafka.wire`` (and ``minikafka.browser``, to say in
  one line that a browser tab cannot serve); nothing else (viz, spark, cli), not
  even lazily.
- ``minikafka.client`` (the in-process clients) imports only ``core``, ``cluster``,
  ``errors`` and ``codecs`` of minikafka; ``minikafka.wire`` only ``core``, ``errors`` and
  ``codecs``: it serves the ``ClusterPort`` it is given. Neither imports the modules beside
  them (viz, tools, dump, spark, realkafka, cli, ...), not even inside a function.
- ``minikafka.codecs`` is the thin bridge from the core's batch codec to kafka-python's
  compression codecs: only the standard library, ``kafka.codec`` and ``kafka.errors``.
- ``minikafka.errors`` is the thin bridge from core error codes to kafka-python's exception
  classes: only the standard library, ``kafka.errors`` and ``minikafka.core``.
- Nothing outside ``minikafka.viz`` imports ``minikafka.viz``, except ``minikafka.cli``
  inside a function (so ``minikafka --help`` does not load graphviz and ipywidgets),
  ``minikafka.course.pictures`` inside a function (it shows viz's graphs, drawn by viz's
  one renderer, ``minikafka.viz.svg``) and
  ``minikafka.demo``, the presenter page, which is a front end over the same views.
- ``minikafka.wire``, ``minikafka.viz``, ``minikafka.dump`` and ``minikafka.tools`` do not
  import ``minikafka.client``: the in-process clients are one door onto the brokers, the
  wire another, and both call the broker's API (``minikafka.core.api``).
  ``UPWARD_CLIENT_IMPORTS`` would list an exception; it is empty and stays so.
- ``minikafka.course`` (what only the lessons and labs use) sits on top: nothing else in
  the package imports it.
- No import circle among minikafka's modules. Every import counts here: at module level,
  inside a function and under ``if TYPE_CHECKING:``. A circle hidden in a function or behind
  TYPE_CHECKING still ties the two modules together (each needs the other to be read or to
  run); the cure is to move the shared piece down a layer or to type against a port
  (``ClusterPort``, ``GroupPort``). ``from pkg import sub`` is an edge to ``pkg.sub``;
  a module's own parent packages are not edges (Python loads them first anyway).
- No private name (``_x``) is imported from another module: what two modules share is public.

For the layer rules, imports under ``if TYPE_CHECKING:`` are ignored: they never run. So are imports of the
module's own parent packages (``from . import x`` names ``minikafka``, which is loaded
before any of its modules anyway); what counts is ``minikafka.x``.

The checker works on source text, so it runs on a partial package, and the tests at the
bottom feed it synthetic modules to show it catches each kind of break.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "minikafka"
PACKAGE_DIR = Path(__file__).resolve().parent.parent / PACKAGE

# Third-party modules the core may use: small C helpers with no I/O and no state.
CORE_THIRD_PARTY = frozenset({"crc32c", "murmurhash2"})

# Standard-library modules that would make the core non-deterministic or do I/O.
CORE_FORBIDDEN_STDLIB = frozenset(
    {
        "asyncio",
        "concurrent",
        "http",
        "multiprocessing",
        "secrets",
        "selectors",
        "socket",
        "socketserver",
        "ssl",
        "subprocess",
        "threading",
        "urllib",
    }
)

# Calls that read the wall clock or a hidden random state: the core uses the simulated clock
# and a seeded ``random.Random`` instead.
CORE_FORBIDDEN_CALLS = frozenset(
    {
        "time.time",
        "time.time_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "time.perf_counter",
        "time.perf_counter_ns",
        "time.sleep",
        "datetime.now",
        "datetime.utcnow",
        "datetime.today",
        "date.today",
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "datetime.datetime.today",
        "datetime.date.today",
        "uuid.uuid1",
        "uuid.uuid4",
        "os.urandom",
        "os.getrandom",
    }
)
RANDOM_ALLOWED = frozenset({"Random"})  # random.Random(seed) is fine; random.random() is not

STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}


@dataclass(frozen=True)
class Import:
    """One imported module, as seen from the importing module."""

    target: str  # absolute dotted name, e.g. "minikafka.core.log"
    line: int
    in_function: bool  # inside a def (lazy import)
    type_only: bool  # under ``if TYPE_CHECKING:``

    @property
    def top(self) -> str:
        return self.target.split(".")[0]


def module_name(path: Path, root: Path) -> tuple[str, bool]:
    """Dotted module name of ``path`` (a file under ``root/minikafka``) and whether it is a package."""
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    if name:
        base = [*base, *name.split(".")]
    return ".".join(base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def find_imports(source: str, module: str, is_package: bool = False) -> list[Import]:
    """Every module that ``source`` (the text of ``module``) imports.

    ``from a import b`` yields both ``a`` and ``a.b`` (``b`` may be a submodule); literal
    ``importlib.import_module("x")`` and ``__import__("x")`` calls count as imports too.
    """
    tree = ast.parse(source)
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool, type_only: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(alias.name, node.lineno, in_function, type_only))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _resolve_relative(module, is_package, node.level, node.module)
            else:
                base = node.module or ""
            found.append(Import(base, node.lineno, in_function, type_only))
            for alias in node.names:
                if alias.name != "*":
                    found.append(
                        Import(f"{base}.{alias.name}", node.lineno, in_function, type_only)
                    )
        elif isinstance(node, ast.Call):
            func = node.func
            fname = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else None
            )
            if (
                fname in {"import_module", "__import__"}
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.append(Import(node.args[0].value, node.lineno, in_function, type_only))
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, in_function, True)
            for child in node.orelse:
                visit(child, in_function, type_only)
            return
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner, type_only)

    visit(tree, False, False)
    return found


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def nondeterministic_calls(source: str) -> list[tuple[int, str]]:
    """Calls in ``source`` that read the wall clock, the OS's entropy or the global RNG."""
    tree = ast.parse(source)
    # Names bound by ``from time import time`` and the like map back to "time.time".
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
    bad: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if name is None:
            continue
        head, _, rest = name.partition(".")
        full = f"{aliases[head]}.{rest}" if head in aliases and rest else aliases.get(head, name)
        global_rng = full.startswith("random.") and full.split(".")[1] not in RANDOM_ALLOWED
        if full in CORE_FORBIDDEN_CALLS or global_rng:
            bad.append((node.lineno, full))
    return bad


def _within(target: str, prefix: str) -> bool:
    return target == prefix or target.startswith(prefix + ".")


@dataclass(frozen=True)
class Rule:
    """What the modules under ``scope`` may import."""

    scope: str
    what: str  # how the rule reads in a message
    internal: tuple[str, ...]  # minikafka modules allowed anywhere in the file
    lazy_internal: tuple[str, ...] = ()  # minikafka modules allowed only inside a function
    # dotted prefixes beyond the stdlib; None: any installed package
    third_party: frozenset[str] | None = CORE_THIRD_PARTY
    forbidden_stdlib: frozenset[str] = frozenset()
    deterministic: bool = False  # also reject wall-clock and global-RNG calls


RULES = (
    Rule(
        f"{PACKAGE}.core",
        "core may import only the standard library, crc32c/murmurhash2 and minikafka.core",
        internal=(f"{PACKAGE}.core",),
        forbidden_stdlib=CORE_FORBIDDEN_STDLIB,
        deterministic=True,
    ),
    Rule(
        f"{PACKAGE}.cluster",
        "cluster may import only the standard library, minikafka.core and minikafka.errors "
        "(and minikafka.client, minikafka.wire, minikafka.codecs or minikafka.browser inside "
        "a function)",
        internal=(f"{PACKAGE}.core", f"{PACKAGE}.cluster", f"{PACKAGE}.errors"),
        lazy_internal=(f"{PACKAGE}.client", f"{PACKAGE}.wire", f"{PACKAGE}.codecs",
                       f"{PACKAGE}.browser"),
    ),
    Rule(
        f"{PACKAGE}.client",
        "client may import only minikafka.core, minikafka.cluster, minikafka.errors and "
        "minikafka.codecs of minikafka",
        internal=tuple(f"{PACKAGE}.{m}" for m in ("core", "cluster", "errors", "codecs",
                                                  "client")),
        third_party=None,
    ),
    Rule(
        f"{PACKAGE}.wire",
        "wire may import only minikafka.core, minikafka.errors and minikafka.codecs of "
        "minikafka (it serves whatever ClusterPort it is given)",
        internal=tuple(f"{PACKAGE}.{m}" for m in ("core", "errors", "codecs", "wire")),
        third_party=None,
    ),
    Rule(
        f"{PACKAGE}.codecs",
        "codecs may import only the standard library, kafka.codec and kafka.errors",
        internal=(f"{PACKAGE}.codecs",),
        third_party=frozenset({"kafka.codec", "kafka.errors"}),
    ),
    Rule(
        f"{PACKAGE}.errors",
        "errors may import only the standard library, kafka.errors and minikafka.core",
        internal=(f"{PACKAGE}.core", f"{PACKAGE}.errors"),
        third_party=frozenset({"kafka.errors"}),
    ),
)


# Layers that sit beside the in-process clients, not above them.
NO_CLIENT_SCOPES = tuple(f"{PACKAGE}.{m}" for m in ("wire", "viz", "dump", "tools"))

# (importing module, imported module) pairs excused from the rule: none. settle_group went
# to minikafka.cluster, the reset-offsets parsing and plan to minikafka.core.offset_reset.
UPWARD_CLIENT_IMPORTS: frozenset[tuple[str, str]] = frozenset()

# The course package: on top of everything, imported by nothing else in the package.
COURSE = f"{PACKAGE}.course"


def client_imports(module: str, imports: list[Import]) -> list[Import]:
    """The imports of minikafka.client by a module that must not make them."""
    if not _within_any(module, NO_CLIENT_SCOPES):
        return []
    return [i for i in imports if _within(i.target, f"{PACKAGE}.client")]


def _ancestors(module: str, is_package: bool) -> set[str]:
    parts = module.split(".")
    stop = len(parts) if is_package else len(parts) - 1
    return {".".join(parts[:i]) for i in range(1, stop + 1)}


def _allowed(imp: Import, rule: Rule) -> bool:
    if imp.top == PACKAGE:
        internal = rule.internal + (rule.lazy_internal if imp.in_function else ())
        return any(_within(imp.target, p) for p in internal)
    if rule.third_party is None:
        return True
    return imp.top in STDLIB or any(_within(imp.target, p) for p in rule.third_party)


def check_module(module: str, source: str, is_package: bool = False) -> list[str]:
    """Human-readable rule violations for one module; empty when it follows the rules."""
    problems: list[str] = []
    parents = _ancestors(module, is_package)
    imports = [
        i
        for i in find_imports(source, module, is_package)
        if not i.type_only and i.target not in parents
    ]

    for rule in RULES:
        if not _within(module, rule.scope):
            continue
        for imp in imports:
            if not _allowed(imp, rule):
                where = " at module level" if _within_any(imp.target, rule.lazy_internal) else ""
                problems.append(f"{module}:{imp.line}: {rule.what}; not {imp.target!r}{where}")
            elif imp.top in rule.forbidden_stdlib:
                problems.append(
                    f"{module}:{imp.line}: {rule.scope} is pure and deterministic; "
                    f"it must not import {imp.target!r}"
                )
        if rule.deterministic:
            for line, call in nondeterministic_calls(source):
                problems.append(
                    f"{module}:{line}: {rule.scope} must not call {call}() "
                    "(use the simulated clock and the cluster's seeded random.Random)"
                )

    if not (_within(module, f"{PACKAGE}.viz") or _within(module, f"{PACKAGE}.demo")):
        lazy_ok = _within(module, f"{PACKAGE}.cli") or module == f"{COURSE}.pictures"
        for imp in imports:
            if _within(imp.target, f"{PACKAGE}.viz") and not (lazy_ok and imp.in_function):
                hint = (
                    " at module level (import it inside the command's function)" if lazy_ok else ""
                )
                problems.append(f"{module}:{imp.line}: must not import {imp.target!r}{hint}")

    if not _within(module, COURSE):
        for imp in imports:
            if _within(imp.target, COURSE):
                problems.append(f"{module}:{imp.line}: must not import {imp.target!r} "
                                "(minikafka.course serves the notebooks; nothing below uses it)")

    # "from minikafka.client.group import settle_group" also yields the bare package and
    # module; an allowed pair excuses those too.
    excused = {prefix for m, t in UPWARD_CLIENT_IMPORTS if m == module
               for prefix in _ancestors(t, True)}
    for imp in client_imports(module, imports):
        if (module, imp.target) not in UPWARD_CLIENT_IMPORTS and imp.target not in excused:
            problems.append(f"{module}:{imp.line}: must not import {imp.target!r} "
                            "(use minikafka.core.api or minikafka.cluster)")

    return sorted(set(problems))


def private_imports(module: str, source: str, is_package: bool = False) -> list[str]:
    """``from minikafka.x import _name``: a private name taken from another module."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = (_resolve_relative(module, is_package, node.level, node.module) if node.level
                else node.module or "")
        if not _within(base, PACKAGE):
            continue
        for alias in node.names:
            if alias.name.startswith("_") and not alias.name.startswith("__"):
                problems.append(f"{module}:{node.lineno}: imports the private name "
                                f"{alias.name!r} from {base!r} (make it public, or move it)")
    return problems


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """{module: the minikafka modules it imports}, counting every import (module level,
    in a function, under TYPE_CHECKING). ``sources`` maps a module to (text, is_package)."""
    def owner(target: str) -> str | None:
        while target and target not in sources:
            target = target.rpartition(".")[0]
        return target or None

    graph: dict[str, set[str]] = {}
    for module, (source, is_package) in sources.items():
        parents = _ancestors(module, is_package)
        imports = find_imports(source, module, is_package)
        # "from pkg import sub" yields pkg and pkg.sub: the edge is to the submodule.
        submodules = {(i.line, i.target) for i in imports if i.target in sources}
        edges = set()
        for imp in imports:
            if imp.target in sources and any(
                    line == imp.line and t.startswith(imp.target + ".") for line, t in submodules):
                continue
            target = owner(imp.target)
            if target is not None and target != module and target not in parents:
                edges.add(target)
        graph[module] = edges
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted, and
    any module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, ()):
                cycles.append(sorted(group))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(cycles)


def describe_cycle(group: list[str], graph: dict[str, set[str]]) -> str:
    members = set(group)
    return "; ".join(f"{m} -> {', '.join(sorted(graph[m] & members))}" for m in group)


def _within_any(target: str, prefixes: tuple[str, ...]) -> bool:
    return any(_within(target, p) for p in prefixes)


def package_modules(package_dir: Path = PACKAGE_DIR) -> list[tuple[str, Path, bool]]:
    if not package_dir.is_dir():
        return []
    out = []
    for path in sorted(package_dir.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        name, is_package = module_name(path, package_dir.parent)
        out.append((name, path, is_package))
    return out


# ------------------------------------------------------------------ the real package


def test_package_follows_import_rules() -> None:
    problems: list[str] = []
    for name, path, is_package in package_modules():
        problems += check_module(name, path.read_text(encoding="utf-8"), is_package)
    assert not problems, "import rule violations:\n" + "\n".join(problems)


def _package_sources() -> dict[str, tuple[str, bool]]:
    return {name: (path.read_text(encoding="utf-8"), is_package)
            for name, path, is_package in package_modules()}


def test_package_has_no_import_cycle() -> None:
    graph = import_graph(_package_sources())
    cycles = import_cycles(graph)
    assert not cycles, "import circles:\n" + "\n".join(describe_cycle(c, graph) for c in cycles)


def test_package_imports_no_private_name_across_modules() -> None:
    problems = [p for name, (source, is_package) in _package_sources().items()
                for p in private_imports(name, source, is_package)]
    assert not problems, "\n".join(problems)


def test_no_upward_client_import_is_excused() -> None:
    """The allow-list could only shrink, and it is empty now: wire, viz, dump and tools
    import no part of minikafka.client."""
    assert not UPWARD_CLIENT_IMPORTS
    found = set()
    for name, path, is_package in package_modules():
        for imp in client_imports(name, find_imports(path.read_text(encoding="utf-8"), name,
                                                     is_package)):
            found.add((name, imp.target))
    assert not found, sorted(found)


def test_scanner_sees_the_package() -> None:
    modules = {name for name, _, _ in package_modules()}
    assert PACKAGE in modules, f"{PACKAGE_DIR}/__init__.py not found by the scanner"


# ------------------------------------------------------------------ the checker itself


def test_relative_imports_resolve() -> None:
    src = "from . import log\nfrom .. import viz\nfrom .replica import Replica\n"
    targets = {i.target for i in find_imports(src, "minikafka.core.group")}
    assert {"minikafka.core", "minikafka.core.log", "minikafka", "minikafka.viz"} <= targets
    assert "minikafka.core.replica.Replica" in targets
    pkg = {i.target for i in find_imports("from .clock import Clock\n", "minikafka.core", True)}
    assert "minikafka.core.clock" in pkg


@pytest.mark.parametrize(
    "module, source",
    [
        ("minikafka.core.log", "import heapq\nfrom collections import deque\n"),
        ("minikafka.core.log", "import crc32c\nfrom murmurhash2 import murmurhash2\n"),
        ("minikafka.core.log", "from minikafka.core import clock\nfrom .clock import Clock\n"),
        ("minikafka.core.clock", "import random\nrng = random.Random(7)\n"),
        (
            "minikafka.core.log",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from minikafka.cluster import Cluster\n",
        ),
        ("minikafka.cluster", "from minikafka.core.clock import Clock\nimport itertools\n"),
        ("minikafka.cluster", "import threading\nfrom . import errors as kerrors\n"),
        ("minikafka.cluster", "def producer():\n    from .client.producer import KafkaProducer\n"),
        ("minikafka.cluster", "def serve():\n    from .wire.serve import serve\n"),
        ("minikafka.errors", "import kafka.errors as k\nfrom kafka.errors import *\n"),
        ("minikafka.codecs", "import gzip\nimport kafka.codec as codec\n"),
        ("minikafka.cluster", "def f():\n    from .codecs import CODECS\n"),
        ("minikafka.errors", "from kafka.errors import KafkaError\nfrom .core.errors import E\n"),
        ("minikafka.cli", "def demo():\n    from minikafka.viz import panel\n    return panel\n"),
        ("minikafka.viz.panels", "from minikafka.viz.render import draw\nimport graphviz\n"),
        ("minikafka.demo.stage", "from minikafka.viz.palette import BLUE\n"),
        ("minikafka.wire.handlers.fetch", "from ...core.api import fetch_partition\n"),
        ("minikafka.viz.consumers", "from minikafka.cluster import settle_group\n"),
        ("minikafka.course.tables", "from minikafka.course.quizzes import LETTERS\n"),
        ("minikafka.course.lab_admin", "from .lab_cluster import bootstrap_servers\n"),
        (
            "minikafka.client.producer",
            "import kafka.errors\nfrom minikafka.cluster import Cluster\n",
        ),
        ("minikafka.client.admin", "from ..core.features import SUPPORTED_FEATURES\n"),
        ("minikafka.wire.handlers.produce", "from kafka.protocol import x\nfrom ...codecs import C\n"),
    ],
)
def test_checker_accepts(module: str, source: str) -> None:
    assert check_module(module, source, is_package=module == PACKAGE) == []


@pytest.mark.parametrize(
    "module, source, expected",
    [
        ("minikafka.core.log", "import kafka.errors\n", "'kafka.errors'"),
        ("minikafka.core.log", "from minikafka.cluster import Cluster\n", "'minikafka.cluster'"),
        ("minikafka.core.log", "from .. import cluster\n", "'minikafka.cluster'"),
        ("minikafka.core.log", "from minikafka import Cluster\n", "'minikafka.Cluster'"),
        ("minikafka.core.log", "from .. import errors\n", "'minikafka.errors'"),
        ("minikafka.core.log", "import asyncio\n", "'asyncio'"),
        ("minikafka.core.log", "import socket\n", "'socket'"),
        ("minikafka.core.log", "import time\nnow = time.time()\n", "time.time()"),
        ("minikafka.core.log", "from time import monotonic\nx = monotonic()\n", "time.monotonic()"),
        ("minikafka.core.log", "import random\nx = random.randint(0, 9)\n", "random.randint()"),
        ("minikafka.core.log", "import random as r\nx = r.random()\n", "random.random()"),
        (
            "minikafka.core.log",
            "from datetime import datetime\nx = datetime.now()\n",
            "datetime.datetime.now()",
        ),
        ("minikafka.core.log", "import graphviz\n", "'graphviz'"),
        ("minikafka.cluster", "import minikafka.client\n", "at module level"),
        ("minikafka.cluster", "from .wire import server\n", "at module level"),
        ("minikafka.cluster", "def f():\n    import minikafka.spark\n", "'minikafka.spark'"),
        ("minikafka.errors", "import kafka\n", "'kafka'"),
        ("minikafka.codecs", "from kafka import KafkaProducer\n", "'kafka.KafkaProducer'"),
        ("minikafka.codecs", "from .core import storage\n", "'minikafka.core'"),
        ("minikafka.errors", "from kafka import KafkaProducer\n", "'kafka.KafkaProducer'"),
        ("minikafka.errors", "from .cluster import Cluster\n", "'minikafka.cluster'"),
        ("minikafka.cluster", "import kafka\n", "'kafka'"),
        ("minikafka", "from minikafka.viz import Panel\n", "'minikafka.viz'"),
        ("minikafka", "from . import viz\n", "'minikafka.viz'"),
        ("minikafka.wire.server", "import minikafka.viz.render\n", "'minikafka.viz.render'"),
        ("minikafka.cli", "from minikafka.viz import panel\n", "module level"),
        (
            "minikafka.wire.handlers.fetch",
            "from ...client.consumer import KafkaConsumer\n",
            "'minikafka.client.consumer'",
        ),
        ("minikafka.wire.server", "def f():\n    import minikafka.client\n", "'minikafka.client'"),
        ("minikafka.tools.topics", "from ..client import admin\n", "'minikafka.client.admin'"),
        ("minikafka.viz.panels", "from minikafka.client.group import Member\n", "client.group"),
        ("minikafka.viz.consumers", "from minikafka.client.group import settle_group\n",
         "'minikafka.client.group.settle_group'"),
        ("minikafka.tools.consumer_groups", "from ..client.admin import format_reset_plan\n",
         "'minikafka.client.admin.format_reset_plan'"),
        ("minikafka.doctor", "from .course.lab_cluster import DATA_DIR_ENV\n",
         "'minikafka.course.lab_cluster.DATA_DIR_ENV'"),
        ("minikafka.viz.rebalance", "def f():\n    import minikafka.course\n", "'minikafka.course'"),
        ("minikafka.dump", "from .client.codec import encode_batch\n", "'minikafka.client"),
        ("minikafka.client.consumer", "def f():\n    import minikafka.viz\n", "'minikafka.viz'"),
        ("minikafka.wire.handlers.api_versions", "from ...cluster import SUPPORTED_FEATURES\n",
         "'minikafka.cluster.SUPPORTED_FEATURES'"),
        ("minikafka.client.admin", "def f():\n    from ..tools import consumer_groups\n",
         "'minikafka.tools"),
        ("minikafka.client.producer", "from ..semantics import check\n", "'minikafka.semantics"),
        ("minikafka.wire.server", "from ..doctor import find_java\n", "'minikafka.doctor"),
        (
            "minikafka.spark.source",
            "import importlib\nv = importlib.import_module('minikafka.viz')\n",
            "'minikafka.viz'",
        ),
    ],
)
def test_checker_rejects(module: str, source: str, expected: str) -> None:
    problems = check_module(module, source, is_package=module == PACKAGE)
    assert problems, f"{module}: expected a violation for:\n{source}"
    assert any(expected in p for p in problems), problems


def test_checker_scans_a_package_tree(tmp_path: Path) -> None:
    pkg = tmp_path / PACKAGE
    (pkg / "core").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""api"""\n')
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "core" / "log.py").write_text("import socket\n")
    found = {name: path for name, path, _ in package_modules(pkg)}
    assert set(found) == {"minikafka", "minikafka.core", "minikafka.core.log"}
    problems = check_module("minikafka.core.log", found["minikafka.core.log"].read_text())
    assert problems and "socket" in problems[0]


# ------------------------------------------------------------------ circles and private names


def _graph(**modules: str) -> dict[str, set[str]]:
    return import_graph({name.replace("__", "."): (src, False) for name, src in modules.items()})


def test_cycle_checker_finds_a_circle_at_module_level() -> None:
    graph = _graph(minikafka__a="from . import b\n", minikafka__b="from .a import X\n")
    assert import_cycles(graph) == [["minikafka.a", "minikafka.b"]]


@pytest.mark.parametrize("back_edge", [
    "def f():\n    from .a import X\n",  # hidden in a function
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import X\n",
    "import importlib\nm = importlib.import_module('minikafka.a')\n",
])
def test_cycle_checker_counts_lazy_and_type_only_imports(back_edge: str) -> None:
    graph = _graph(minikafka__a="from .b import Y\n", minikafka__b=back_edge)
    assert import_cycles(graph) == [["minikafka.a", "minikafka.b"]]


def test_cycle_checker_finds_a_long_circle_and_names_its_edges() -> None:
    graph = _graph(minikafka__a="from .b import X\n", minikafka__b="from .c import X\n",
                   minikafka__c="from .a import X\n", minikafka__d="from .a import X\n")
    cycles = import_cycles(graph)
    assert cycles == [["minikafka.a", "minikafka.b", "minikafka.c"]]
    assert "minikafka.c -> minikafka.a" in describe_cycle(cycles[0], graph)


def test_cycle_checker_accepts_a_layered_tree() -> None:
    sources = {
        "minikafka": ("from .cluster import Cluster\n", True),
        "minikafka.cluster": ("from .core import log\nfrom .core.log import Log\n", False),
        "minikafka.core": ("from .log import Log\n", True),
        # a submodule importing its own package is not an edge back
        "minikafka.core.log": ("from . import errors\nfrom .. import core\n", False),
        "minikafka.core.errors": ("", False),
    }
    assert import_cycles(import_graph(sources)) == []


def test_cycle_checker_sees_a_circle_through_a_package() -> None:
    sources = {
        "minikafka.core": ("from .broker import Broker\n", True),
        "minikafka.core.broker": ("", False),
        "minikafka.core.api": ("from .port import Port\n", True),
        "minikafka.core.api.port": ("from ..broker import Broker\n", False),
    }
    sources["minikafka.core.broker"] = ("from .api import fetch\n", False)
    assert import_cycles(import_graph(sources)) == [["minikafka.core.api",
                                                     "minikafka.core.api.port",
                                                     "minikafka.core.broker"]]


@pytest.mark.parametrize("source, ok", [
    ("from .group import _noop\n", False),
    ("from minikafka.core.groups.coordinator import _live\n", False),
    ("from .group import noop, GroupMember\n", True),
    ("from .group import __version__\n", True),
    ("from kafka.util import _private\n", True),  # not ours to rename
])
def test_private_name_checker(source: str, ok: bool) -> None:
    assert (private_imports("minikafka.client.consumer_member", source) == []) is ok
