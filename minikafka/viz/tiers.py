"""A partition's log in two tiers over time (lesson 20, tiered storage).

One row per sample (``minikafka.course.tiered_storage.TierSample``): a bar of the
partition's offsets from 0 to the last log end, split at the log start offset, the
local log start offset and the highest offset in remote storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import graphviz

from .bars import bar_timeline, offset_bar
from .html import td
from .palette import BLACK, BLUE, BLUISH_GREEN, LIGHT_GREY, WHITE, YELLOW

STRETCHES = (  # (colour, what the stretch of offsets is)
    (LIGHT_GREY, "deleted by retention.ms / retention.bytes: gone from both tiers"),
    (BLUE, "remote only: a fetch here is served from the remote store"),
    (BLUISH_GREEN, "remote and still local (kept for local.retention.ms)"),
    (YELLOW, "local only: not copied yet (the active segment, or the copy lags)"),
)


def tiered_log_view(samples: Sequence[Any], *, width: int = 300,
                    title: str = "one partition over time: remote and local tiers"
                    ) -> graphviz.Digraph:
    """One row per sample: minute, the remote store's state, the bar, and the numbers
    (log start · local log start · highest remote · log end)."""
    top = max((s.log_end for s in samples), default=1) or 1
    scale = width / top
    rows = []
    for s in samples:
        cuts = [s.log_start, max(s.log_start, s.local_start),
                max(s.local_start, s.highest_remote + 1), s.log_end]
        bar = offset_bar([f for f, _ in STRETCHES], cuts, scale, width)
        remote = s.highest_remote if s.highest_remote >= 0 else "none"
        numbers = f"{s.log_start} · {s.local_start} · {remote} · {s.log_end}"
        rows.append("<TR>" + td(f"{s.time_ms // 60_000}", border=0, point=10, align="RIGHT")
                    + td("up" if s.store_up else "DOWN", border=0, point=10, align="LEFT",
                         bold=not s.store_up, color=BLACK if s.store_up else WHITE,
                         fill=WHITE if s.store_up else BLACK)
                    + f'<TD BORDER="0">{bar}</TD>'
                    + td(numbers, border=0, point=10, align="LEFT") + "</TR>")
    return bar_timeline("tiers", title, (
        ("minute", "RIGHT"), ("store", "LEFT"), (f"offsets 0 … {top}", "LEFT"),
        ("start · local start · remote ≤ · end", "LEFT")), rows, STRETCHES)
