"""Where a lesson's time goes in Chromium, as tests/test_lite_browser.py runs it: its
JupyterLite page until the notebook shows, its new kernel until it answers the first cell
(Pyodide, the wheels, the first imports), the last cell, and Run All again in the same kernel.

The peer is the same browser with every request passed through a Playwright route (as the
test refused other hosts before): routing turns Chromium's HTTP cache off, so each lesson's
kernel fetches Pyodide and the wheels again. Each round opens the lessons in a fresh profile,
once each way, alternating which goes first; the CPU is Chromium's (every process of it).

    python tests/benchmarks/lite_chromium.py [--site DIR] [--lessons 00,01,02] [--rounds 3]

Without --site the site is built into a temporary folder first (`minikafka lite build`).
"""
from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import quote

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_lite_browser import SEEN, _Handler, _offline_page, _open_and_run_all, _run_all
from test_lite_lessons import LESSONS


def chromium_cpu() -> float:
    """CPU seconds of this process's Chromium processes so far."""
    total = 0.0
    for p in psutil.Process().children(recursive=True):
        try:
            if "chrom" in p.name():
                t = p.cpu_times()
                total += t.user + t.system
        except psutil.Error:
            pass
    return total


def run(site: str, lessons: list[Path], routed: bool, work: Path) -> dict[str, float]:
    """The lessons in a fresh profile: the sums of each phase, and Chromium's CPU."""
    sums = dict.fromkeys(("page", "kernel", "first", "warm"), 0.0)
    refused: list[str] = []
    with _offline_page(work, refused) as page:
        if routed:  # the peer: every request through a route, which turns the cache off
            page.context.route("**/*", lambda route: route.continue_())
        for path in lessons:
            ready, kernel, first = _open_and_run_all(
                page, f"{site}/notebooks/index.html?path={quote(path.name)}", path.stem)
            warm = _run_all(page, page.evaluate(SEEN)["last"], f"{path.stem} (warm run)")[1]
            for key, value in zip(sums, (ready, kernel, first, warm)):
                sums[key] += value
        sums["cpu"] = chromium_cpu()
    assert refused == [], refused
    return sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build one)")
    parser.add_argument("--lessons", default="00,01,02")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    lessons = [p for p in LESSONS if p.stem[:2] in args.lessons.split(",")]
    with tempfile.TemporaryDirectory(prefix="lite-chromium-") as tmp:
        work = Path(tmp)
        site_dir = args.site
        if site_dir is None:
            from minikafka.lite.build import build
            site_dir = build(work / "site")
        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(_Handler, directory=str(site_dir)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        site = f"http://127.0.0.1:{server.server_address[1]}"
        results: dict[str, list[dict[str, float]]] = {"cached": [], "routed": []}
        try:
            for r in range(args.rounds):
                order = ["cached", "routed"] if r % 2 == 0 else ["routed", "cached"]
                for name in order:
                    profile = work / f"{name}-{r}"
                    profile.mkdir()
                    t = run(site, lessons, name == "routed", profile)
                    results[name].append(t)
                    print(f"round {r + 1}  {name:<6} " + "  ".join(
                        f"{k} {v:6.1f}" for k, v in t.items()), flush=True)
        finally:
            server.shutdown()
            server.server_close()
    print(f"\nmedians of {args.rounds} rounds, {len(lessons)} lessons (s): " + "; ".join(
        f"{name}: " + ", ".join(f"{k} {statistics.median(t[k] for t in runs):.1f}"
                                for k in runs[0]) for name, runs in results.items()))
    cpu = {name: statistics.median(t["cpu"] for t in runs) for name, runs in results.items()}
    first = {name: statistics.median(t["first"] for t in runs) for name, runs in results.items()}
    print(f"routed/cached: first runs {first['routed'] / first['cached']:.2f}x, "
          f"Chromium's CPU {cpu['routed'] / cpu['cached']:.2f}x")


if __name__ == "__main__":
    main()
