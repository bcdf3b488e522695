"""The presenter page in a real browser: Debian's Chromium driven by Playwright.

A scenario stepped with the keyboard and the buttons, screenshots before and after the
broker failure, the leader of orders-0 read from the SVG in the page; live mode over
`cluster.serve()`, where a stopped broker must show in the page within 2 s.
Chromium is /usr/bin/chromium (test.sh installs it); `playwright install` is never used.
Every request the page makes must go to the loopback demo server.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from minikafka.cluster import Cluster
from minikafka.demo.app import _switch, scenario_list
from minikafka.demo.live import LiveView
from minikafka.demo.server import DemoServer

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DOCS_PNG = Path(__file__).resolve().parent.parent / "docs" / "demo.png"

# Each broker box in the cluster SVG: its status line and the role of one partition.
READ_BROKERS = """(partition) => {
  const out = {};
  for (const node of document.querySelectorAll('#cluster svg g.node')) {
    const texts = [...node.querySelectorAll('text')].map((t) => t.textContent.trim());
    const i = texts.findIndex((t) => t.replace('▶ ', '') === partition);
    out[node.querySelector('title').textContent] = {status: texts[1], role: texts[i + 1]};
  }
  return out;
}"""


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: run ./test.sh"
    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh user-data dir
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=ARGS, headless=True,
            viewport={"width": 1280, "height": 720})
        ctx.outside: list[str] = []

        def only_loopback(route: Any) -> None:
            if route.request.url.startswith("http://127.0.0.1:"):
                route.continue_()
            else:
                ctx.outside.append(route.request.url)
                route.abort()

        ctx.route("**/*", only_loopback)
        yield ctx
        ctx.close()
    assert not ctx.outside, f"the page fetched from outside: {ctx.outside}"


def brokers(page: Any, partition: str = "orders-0") -> dict[int, dict[str, str]]:
    return {int(k.removeprefix("broker_")): v
            for k, v in page.evaluate(READ_BROKERS, partition).items()}


def leader(page: Any, partition: str = "orders-0") -> int:
    leaders = [b for b, v in brokers(page, partition).items() if v["role"] == "★ leader"]
    assert len(leaders) == 1, brokers(page, partition)
    return leaders[0]


def wait_step(page: Any, step: int) -> None:
    page.wait_for_function(
        "(s) => document.getElementById('step').textContent.startsWith('step ' + s + ' ')",
        arg=step, timeout=10_000)


def test_leader_failover_stepped_in_the_browser(context: Any, tmp_path: Path) -> None:
    with DemoServer(_switch("leader-failover"), port=0, switch=_switch,
                    scenarios=scenario_list()) as server:
        page = context.new_page()
        started = time.monotonic()
        page.goto(server.url)
        page.wait_for_selector("#cluster svg g.node")
        assert time.monotonic() - started < 10
        wait_step(page, 0)
        assert page.title() == "minikafka demo · Leader failover"

        page.keyboard.press("ArrowRight")
        wait_step(page, 1)
        old = leader(page)
        assert brokers(page)[old]["status"].startswith("✓ running")
        before = tmp_path / "before.png"
        page.screenshot(path=str(before))

        page.click("#next")  # the crash
        wait_step(page, 2)
        assert brokers(page)[old]["status"] == "✕ DOWN"
        page.keyboard.press(" ")  # the controller notices and elects
        wait_step(page, 3)
        new = leader(page)
        assert new != old
        assert brokers(page)[old]["status"] == "✕ DOWN"
        assert f"elects broker {new}" in page.text_content("#narration")
        after = tmp_path / "after.png"
        page.screenshot(path=str(after))
        assert before.read_bytes() != after.read_bytes()
        if not DOCS_PNG.exists():  # the README's picture, made once
            DOCS_PNG.parent.mkdir(exist_ok=True)
            shutil.copy(after, DOCS_PNG)

        page.reload()  # the step lives on the server
        page.wait_for_selector("#cluster svg g.node")
        wait_step(page, 3)
        assert leader(page) == new

        page.keyboard.press("ArrowLeft")
        wait_step(page, 2)
        page.click("#back")
        wait_step(page, 1)
        assert leader(page) == old
        page.keyboard.press("p")
        page.wait_for_function("document.getElementById('play').textContent.includes('Pause')")
        page.keyboard.press("p")
        page.wait_for_function("document.getElementById('play').textContent.includes('Play')")
        page.keyboard.press("r")
        wait_step(page, 0)
        page.close()


def test_fault_buttons_inject_and_back_undoes(context: Any) -> None:
    with DemoServer(_switch("leader-failover"), port=0, switch=_switch,
                    scenarios=scenario_list()) as server:
        page = context.new_page()
        page.goto(server.url)
        page.wait_for_selector("#cluster svg g.node")
        page.click("#brokers button[data-broker='2']")
        page.click("button[data-fault='crash']")
        page.wait_for_function(
            "document.getElementById('narration').textContent.startsWith('⚡')")
        assert "crashed broker 2" in page.text_content("#narration")
        assert brokers(page)[2]["status"] == "✕ DOWN"
        assert page.text_content("#brokers button[data-broker='2']") == "2✕"
        page.click("button[data-fault='wait']")
        page.wait_for_function(
            "document.getElementById('narration').textContent.includes('10 s of')")
        page.click("#back")
        page.click("#back")
        page.wait_for_function("document.getElementById('back').disabled")
        page.wait_for_function(
            "!document.getElementById('narration').textContent.startsWith('⚡')")
        assert brokers(page)[2]["status"].startswith("✓ running")
        # An answer that arrives late (a long poll overtaken by a command) is ignored.
        shown = page.text_content("#narration")
        page.evaluate("""async () => {
          const s = await (await fetch('/api/state')).json();
          render({...s, version: s.version - 1, narration: 'STALE'});
        }""")
        assert page.text_content("#narration") == shown
        # The scenario menu switches the show for everyone.
        page.select_option("#scenario", "transactions")
        page.wait_for_function("document.title.includes('Exactly-once')")
        assert "ledger-0" in page.text_content("#log")
        page.close()


def test_live_mode_shows_a_stopped_broker_within_two_seconds(context: Any) -> None:
    cluster = Cluster(brokers=3, seed=5)
    cluster.create_topic("orders", partitions=3, replication_factor=3)
    with cluster.serve(port=0) as wire:
        live = LiveView(wire.bootstrap_servers).start()
        with DemoServer(live, port=0) as server:
            page = context.new_page()
            page.goto(server.url)
            page.wait_for_function("document.querySelectorAll('#cluster svg g.node').length == 3",
                                   timeout=30_000)
            assert "live" in page.get_attribute("body", "class")
            assert not page.is_visible("#next") and not page.is_visible("button[data-fault]")
            victim = leader(page)
            assert all(v["status"].startswith("✓ running") for v in brokers(page).values())
            with cluster.lock:
                cluster.stop_broker(victim)
            stopped = time.monotonic()
            page.wait_for_function(
                "(b) => [...document.querySelectorAll('#cluster svg g.node')].some((n) =>"
                " n.querySelector('title').textContent === 'broker_' + b &&"
                " n.textContent.includes('✕ DOWN'))", arg=victim, timeout=2_000)
            assert time.monotonic() - stopped < 2.0
            page.wait_for_function(
                "(b) => !document.getElementById('narration').textContent.includes('3 of 3')",
                arg=victim, timeout=2_000)
            assert leader(page) != victim
            page.close()
