"""One produce as a sequence diagram, rebuilt from the journal.

The journal records what the brokers did: "append" (the leader wrote the batch),
"replicated" (a follower's fetch brought records and moved its LEO), "isr.shrink" /
"isr.expand", "hw.advanced" (the leader's HW moved), "produce.acked" (the producer
got its answer). A follower's next fetch is what tells the leader its new LEO, so the
diagram draws that fetch right after each "replicated" step: it is implied by the
protocol, not a journal event of its own.

The picture is one table (columns = producer, leader, followers; rows = steps),
which `dot` lays out in a few milliseconds and never reshuffles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import graphviz

from .html import OUTPUT_PT, esc, td
from .palette import BLACK, BLUE, BLUISH_GREEN, FONT, GREY, LIGHT_GREY, VERMILLION, WHITE

if TYPE_CHECKING:
    from ..cluster import Cluster

ACKS_WORDS = {-1: "all", 0: "0", 1: "1"}


@dataclass(frozen=True)
class Step:
    """One row: a message from src to dst, or a note on src when dst is None."""

    time_ms: int
    kind: str  # produce, append, fetch-response, fetch, isr, hw, ack
    src: str
    dst: str | None
    text: str


def _find_ack(events: list, topic: str | None, partition: int | None,
              base_offset: int | None, acks: int | None):
    for e in reversed(events):
        f = e.fields
        if e.kind != "produce.acked":
            continue
        if acks is not None and f.get("acks") != acks:
            continue
        if topic is not None and f["topic"] != topic:
            continue
        if partition is not None and f["partition"] != partition:
            continue
        if base_offset is not None and f["base_offset"] != base_offset:
            continue
        return e
    raise ValueError("no matching acknowledged produce in the journal "
                     f"(topic={topic}, partition={partition}, base_offset={base_offset}, "
                     f"acks={ACKS_WORDS.get(acks, acks)})")


def produce_sequence(cluster: Cluster, topic: str | None = None, partition: int | None = None,
                     base_offset: int | None = None, acks: int | str | None = "all",
                     ) -> tuple[list[str], list[Step]]:
    """Participants and steps of one acknowledged produce (the latest that matches).

    acks: "all" (-1), 1, 0 is never acknowledged, or None for any. For acks=1 the steps
    go on past the ack until the HW covers the batch, showing the window in which an
    acknowledged record is not yet committed.
    """
    acks_code = -1 if acks == "all" else (None if acks is None else int(acks))
    events = cluster.journal.events
    ack = _find_ack(events, topic, partition, base_offset, acks_code)
    tp = (ack.fields["topic"], ack.fields["partition"])
    base, count, leader = ack.fields["base_offset"], ack.fields["count"], ack.fields["broker"]
    end = base + count
    append = next(e for e in reversed(events[:ack.seq])
                  if e.kind == "append" and (e.topic, e.partition) == tp
                  and e.broker == leader and e.base_offset == base)
    producer = str(ack.fields["client"])
    lname = f"broker {leader}"
    replicas = list(cluster.controller.topics[tp[0]].partitions[tp[1]].replicas)
    followers = [f"broker {b}" for b in sorted(replicas) if b != leader]
    participants = [producer, lname, *followers]
    acks_word = ACKS_WORDS.get(ack.fields.get("acks"), "?")
    steps = [
        Step(append.time_ms, "produce", producer, lname,
             f"Produce {tp[0]}-{tp[1]} acks={acks_word}, {count} record(s)"),
        Step(append.time_ms, "append", lname, None,
             f"append offsets {base}..{end - 1}, LEO {append.leo}"),
    ]
    seen: set[int] = set()
    acked = committed = False
    for e in events[append.seq + 1:]:
        if acked and committed:
            break
        f = e.fields
        if e is ack or (e.kind == "produce.acked" and e.seq == ack.seq):
            steps.append(Step(e.time_ms, "ack", lname, producer,
                              f"ack: base offset {base}"))
            acked = True
            continue
        if (f.get("topic"), f.get("partition")) != tp:
            continue
        if e.kind == "replicated" and f["broker"] not in seen and f["leo"] >= end:
            seen.add(f["broker"])
            fname = f"broker {f['broker']}"
            steps.append(Step(e.time_ms, "fetch-response", lname, fname,
                              f"Fetch response: records up to {f['leo'] - 1}"))
            steps.append(Step(e.time_ms, "fetch", fname, lname,
                              f"Fetch(offset={f['leo']}): my LEO is {f['leo']}"))
        elif e.kind in ("isr.shrink", "isr.expand") and not committed:
            steps.append(Step(e.time_ms, "isr", lname, None,
                              f"{'ISR shrinks' if e.kind == 'isr.shrink' else 'ISR grows'}"
                              f" to {f['isr']}"))
        elif e.kind == "hw.advanced" and f["broker"] == leader and f["hw"] >= end \
                and not committed:
            committed = True
            steps.append(Step(e.time_ms, "hw", lname, None,
                              f"HW → {f['hw']}: offsets {base}..{end - 1} committed"))
    return participants, steps


COL_W, TIME_W = 150, 64
STEP_STYLE = {  # colour and weight per step kind; the text always says what it is
    "produce": (BLACK, False), "append": (LIGHT_GREY, False), "fetch-response": (BLUE, False),
    "fetch": (BLUE, False), "isr": (VERMILLION, True), "hw": (BLUISH_GREEN, True),
    "ack": (BLUISH_GREEN, True),
}


def _arrow(text: str, span: int, rightward: bool, colour: str, bold: bool,
           col_w: int) -> str:
    # About 5.4 pt per "─" at 9 pt: the shaft runs from one lifeline to the other.
    shaft = "─" * max(4, int((span - 1) * col_w / 5.4) - 2)
    line = f"{shaft}▶" if rightward else f"◀{shaft}"
    return td(f"{esc(text)}<BR/>{line}", raw=True, colspan=span, border=0, color=colour,
              bold=bold, point=9)


def _two_lines(text: str, width: int = 24) -> str:
    """A note that does not fit one column's width, broken at the space nearest its
    middle (the column is fixed-size; two lines of 9 pt fit its height)."""
    if len(text) <= width or " " not in text:
        return esc(text)
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    cut = min(spaces, key=lambda i: abs(i - len(text) / 2))
    return f"{esc(text[:cut])}<BR/>{esc(text[cut + 1:])}"


def _lifeline(col_w: int) -> str:
    return td("┆", width=col_w, height=36, border=0, color=GREY, point=12)


def sequence_view(participants: list[str], steps: list[Step], *,
                  title: str = "") -> graphviz.Digraph:
    """Draw participants and steps from produce_sequence()."""
    col = {p: i for i, p in enumerate(participants)}
    n = len(participants)
    # As wide as COL_W allows within a notebook's output area (cells pad 2 pt a side).
    col_w = max(90, min(COL_W, (OUTPUT_PT - TIME_W - 4 * (n + 1)) // max(n, 1)))
    t0 = steps[0].time_ms if steps else 0
    rows = []
    if title:
        rows.append("<TR>" + td(title, colspan=n + 1, border=0, bold=True, point=11,
                                align="LEFT") + "</TR>")
    rows.append("<TR>" + td("time", width=TIME_W, height=30, border=0, point=9)
                + "".join(td(p, width=col_w, height=30, border=2, bold=True, fill=WHITE)
                          for p in participants) + "</TR>")
    for s in steps:
        colour, bold = STEP_STYLE[s.kind]
        cells = [td(f"+{s.time_ms - t0} ms", width=TIME_W, height=36, border=0, point=9)]
        a = col[s.src]
        if s.dst is None:
            fill = colour if s.kind != "append" else LIGHT_GREY
            text_colour = BLACK if s.kind == "append" else WHITE
            for i in range(n):
                cells.append(td(_two_lines(s.text, (col_w - 8) * 24 // (COL_W - 8)), raw=True,
                                width=col_w, height=36, fill=fill, color=text_colour,
                                bold=bold, point=9, border=1)
                             if i == a else _lifeline(col_w))
        else:
            b = col[s.dst]
            lo, hi = min(a, b), max(a, b)
            cells += [_lifeline(col_w) for _ in range(lo)]
            cells.append(_arrow(s.text, hi - lo + 1, b > a, colour, bold, col_w))
            cells += [_lifeline(col_w) for _ in range(hi + 1, n)]
        rows.append("<TR>" + "".join(cells) + "</TR>")
    g = graphviz.Digraph("sequence", graph_attr={"fontname": FONT},
                         node_attr={"shape": "plain", "fontname": FONT})
    g.node("sequence", '<<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="2">'
                       + "".join(rows) + "</TABLE>>")
    return g


def produce_sequence_view(cluster: Cluster, topic: str | None = None,
                          partition: int | None = None, base_offset: int | None = None,
                          acks: int | str | None = "all") -> graphviz.Digraph:
    """The latest acknowledged produce matching the filters, from the cluster's journal:
    producer → leader, followers' fetches, HW advance, ack."""
    participants, steps = produce_sequence(cluster, topic, partition, base_offset, acks)
    first = steps[0].text.split(" ")[1]
    return sequence_view(participants, steps, title=f"one produce to {first}, as the "
                                                    "journal recorded it")
