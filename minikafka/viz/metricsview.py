"""A dashboard strip: the metrics an operator watches, over time, one row each.

`metrics_view()` draws the samples of a `minikafka.monitoring.Watch`: one column per
sample, a bar as high as the value (scaled to the row's largest), coloured by what the
value means (vermillion: a paging alert fires; orange: a warning; blue: a plain
number such as a request rate). Numbered marks above the columns name what was done
then (a broker crashed, restarted), listed under the chart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import graphviz

from minikafka.core import metrics as m

from .html import OUTPUT_PT, td, text_pt
from .palette import BLUE, FONT, LIGHT_GREY, ORANGE, VERMILLION

# (MBean name, label, colour when non-zero): the rows, top to bottom.
ROWS = (
    (m.UNDER_MIN_ISR, "UnderMinIsrPartitionCount", VERMILLION),
    (m.OFFLINE_PARTITIONS, "OfflinePartitionsCount", VERMILLION),
    (m.ACTIVE_CONTROLLER, "ActiveControllerCount", BLUE),
    (m.URP, "UnderReplicatedPartitions", ORANGE),
    (m.requests_per_sec("Produce"), "Produce RequestsPerSec", BLUE),
    (m.total_time_ms("Produce"), "Produce TotalTimeMs (mean)", BLUE),
    (m.RECORDS_LAG_MAX, "records-lag-max", ORANGE),
)
BAR_HEIGHT = 26
COLUMN_WIDTH = 12


def _bar(value: float, top: float, colour: str) -> str:
    filled = 0 if value <= 0 or top <= 0 else max(2, round(BAR_HEIGHT * value / top))
    cells = []
    if filled < BAR_HEIGHT:
        cells.append(f'<TR><TD HEIGHT="{BAR_HEIGHT - filled}" WIDTH="{COLUMN_WIDTH}" '
                     f'FIXEDSIZE="TRUE" BGCOLOR="{LIGHT_GREY}"></TD></TR>')
    if filled:
        cells.append(f'<TR><TD HEIGHT="{filled}" WIDTH="{COLUMN_WIDTH}" FIXEDSIZE="TRUE" '
                     f'BGCOLOR="{colour}"></TD></TR>')
    return ('<TD BORDER="0"><TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" '
            f'CELLPADDING="0">{"".join(cells)}</TABLE></TD>')


def _columns(samples: Sequence[Any], per: int) -> list[tuple[int, dict, list[Any]]]:
    """Samples in runs of `per`: (time of the first, highest value of each metric, the
    marked samples). ActiveControllerCount keeps a value other than 1 if one occurs, so a
    moment without a controller (or with two) stays red."""
    out = []
    for k in range(0, len(samples), per):
        run = samples[k:k + per]
        values: dict[str, float] = {}
        for name, _, _ in ROWS:
            seen = [float(s.values.get(name, 0)) for s in run]
            odd = [v for v in seen if v != 1]
            values[name] = odd[0] if name == m.ACTIVE_CONTROLLER and odd else max(seen)
        out.append((run[0].time_ms, values, [s for s in run if s.label]))
    return out


def metrics_view(samples: Sequence[Any], *, title: str = "the cluster's metrics, "
                 "one column per second") -> graphviz.Digraph:
    """One row per metric of ROWS, one column per sample; ActiveControllerCount is
    drawn vermillion where it is not 1 (no controller, or two). When the samples would
    not fit a notebook's output area, each column shows the highest of a run of samples
    (said under the chart)."""
    label_w = max(text_pt(label, 11) for _, label, _ in ROWS) + 50  # and the "max" column
    marked = sum(1 for s in samples if s.label)
    # A column: the bar, its padding (1 + 1) and the spacing (1).
    fit = max(1, (OUTPUT_PT - label_w - 8 * marked) // (COLUMN_WIDTH + 3))
    per = -(-len(samples) // fit)  # ceil
    columns = _columns(samples, max(per, 1))
    n = len(columns)
    marks = [s for _, _, ms in columns for s in ms]
    rows = ["<TR>" + td(title, colspan=n + 2, border=0, bold=True, point=12, align="LEFT")
            + "</TR>"]
    head = [td("", border=0)]
    k = 0
    for _, _, ms in columns:
        numbers = ",".join(str(k + j + 1) for j in range(len(ms)))
        k += len(ms)
        head.append(td(numbers, border=0, point=11 if len(ms) < 2 else 9, bold=True))
    head.append(td("max", border=0, point=11, bold=True, align="LEFT"))
    rows.append("<TR>" + "".join(head) + "</TR>")
    for name, label, colour in ROWS:
        values = [col[1][name] for col in columns]
        top = max(values, default=0.0)
        cells = [td(label, border=0, point=11, align="RIGHT")]
        for v in values:
            c = colour
            if name == m.ACTIVE_CONTROLLER:
                c = BLUE if v == 1 else VERMILLION
                v = v if v else top or 1  # a missing controller is a full red bar
            cells.append(_bar(v, top or 1, c))
        shown = f"{top:g}" if top < 100 else f"{top:.0f}"
        cells.append(td(shown, border=0, point=11, align="LEFT"))
        rows.append("<TR>" + "".join(cells) + "</TR>")
    every = -(-10 // per)  # a time about every 10 s
    times = "".join(td(f"{t // 1000}" if i % every == 0 else "", border=0, point=11)
                    for i, (t, _, _) in enumerate(columns))
    rows.append("<TR>" + td("seconds", border=0, point=11, align="RIGHT") + times
                + td("", border=0) + "</TR>")
    if per > 1:
        rows.append("<TR>" + td(f"one column: the highest of {per} samples", colspan=n + 2,
                                border=0, point=11, align="LEFT") + "</TR>")
    for k, s in enumerate(marks):
        fired = f"  ⇒ {', '.join(s.fired)}" if s.fired else ""
        rows.append("<TR>" + td(f"{k + 1}: at {s.time_ms / 1000:g} s, {s.label}{fired}",
                                colspan=n + 2, border=0, point=11, align="LEFT") + "</TR>")
    g = graphviz.Digraph("metrics", graph_attr={"fontname": FONT},
                         node_attr={"shape": "plain", "fontname": FONT})
    g.node("metrics", '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="1" CELLPADDING="1">'
                      + "".join(rows) + "</TABLE>>")
    return g


class MetricsDashboard:
    """The dashboard live: crash or start a broker, let time run, and watch the rows
    move. `watch` is a `minikafka.monitoring.Watch`; every button has a method of the
    same name for code (`dashboard.crash(2)`, `dashboard.run(10_000)`)."""

    SHOWN = 50  # the newest samples drawn: the chart keeps its width

    def __init__(self, watch: Any) -> None:
        import ipywidgets as W

        self.watch = watch
        if not watch.samples:
            watch.sample()
        brokers = sorted(watch.cluster.brokers)
        self.broker = W.Dropdown(options=brokers, value=brokers[-1], description="broker",
                                 layout=W.Layout(width="150px"))
        buttons = []
        for text, style, action in (("crash", "danger", lambda _: self.crash(self.broker.value)),
                                    ("start", "success", lambda _: self.start(self.broker.value)),
                                    ("run 10 s", "primary", lambda _: self.run(10_000))):
            button = W.Button(description=text, button_style=style,
                              layout=W.Layout(width="auto"))
            button.on_click(action)
            buttons.append(button)
        self.chart = W.HTML()
        self.widget = W.VBox([W.HBox([self.broker, *buttons],
                                     layout=W.Layout(flex_flow="row wrap")), self.chart])
        self._draw()

    def crash(self, broker_id: int) -> None:
        self.watch.cluster.crash_broker(broker_id)
        self.watch.mark(f"crash broker {broker_id}")
        self.run(1_000)

    def start(self, broker_id: int) -> None:
        self.watch.cluster.start_broker(broker_id)
        self.watch.mark(f"start broker {broker_id}")
        self.run(1_000)

    def run(self, ms: int) -> None:
        self.watch.run(ms)
        self._draw()

    def graph(self) -> graphviz.Digraph:
        return metrics_view(self.watch.samples[-self.SHOWN:])

    def _draw(self) -> None:
        from .svg import picture_html

        self.chart.value = picture_html(self.graph())

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
