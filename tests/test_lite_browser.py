"""The browser edition in Debian's Chromium, offline: `minikafka lite build` makes the site,
a standard-library server serves it on 127.0.0.1, and every request to another host is
refused (and must not have been needed). The Pyodide kernel imports minikafka, runs
`Cluster(brokers=3, seed=7)` with the pure-Python CRC-32C and murmur2, and draws a
picture through @viz-js/viz. Chromium is /usr/bin/chromium; `playwright install` is never
used."""
from __future__ import annotations

import functools
import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlparse

import pytest

# One xdist worker builds the site at a time (tests/test_lite_pyodide.py shares its cache).
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(900),
              pytest.mark.xdist_group("lite")]

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

PROBE = """\
import sys
from minikafka import Cluster
from minikafka.core import hashing
from minikafka.course.pictures import show
from minikafka.viz import cluster_view
cluster = Cluster(brokers=3, seed=7)
cluster.create_topic("orders", partitions=3, replication_factor=3)
meta = cluster.producer(acks="all").send("orders", key=b"truck-1", value=b"hello").get()
print("PROBE", sys.platform, hashing.NATIVE, meta.partition, meta.offset)
show(cluster_view(cluster.snapshot()))
"""


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".mjs": "text/javascript",
                      ".js": "text/javascript", ".json": "application/json"}

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from minikafka.lite.build import build

    started = time.monotonic()
    out = build(tmp_path_factory.mktemp("lite") / "site")
    print(f"\nsite built in {time.monotonic() - started:.0f} s")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_site_runs_minikafka_offline_in_chromium(site: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: run ./test.sh"
    refused: list[str] = []

    def offline(route) -> None:
        if urlparse(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=ARGS, headless=True,
            viewport={"width": 1280, "height": 900})
        try:
            ctx.route("**/*", offline)
            page = ctx.new_page()
            started = time.monotonic()
            page.goto(f"{site}/repl/index.html?kernel=python&toolbar=1&code={quote(PROBE)}")
            page.wait_for_selector("text=/PROBE emscripten/", timeout=420_000)
            first_run = time.monotonic() - started
            page.wait_for_selector(".minikafka-picture svg g.node", timeout=60_000)
            text = page.inner_text(".jp-CodeConsole")
            brokers = page.eval_on_selector_all(
                ".minikafka-picture svg g.node title", "ts => ts.map(t => t.textContent)")
        finally:
            ctx.close()
    print(f"first run (kernel start, import, cluster, picture): {first_run:.1f} s")
    assert "PROBE emscripten False" in text  # the pure-Python hashes, in Pyodide
    assert "Traceback" not in text and "Error" not in text
    assert brokers, "the cluster picture drew no nodes"
    assert refused == [], f"the site asked other hosts for {refused}"
