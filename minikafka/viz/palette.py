"""Colours and marks shared by every view.

The colours are Okabe and Ito's palette, which stays distinguishable under the common
colour-vision deficiencies. Colour is never the only signal: every role also has a
symbol, a word and a border style, so a greyscale print or a projector still tells a
leader from an out-of-sync follower.
"""

from __future__ import annotations

from dataclasses import dataclass

# Okabe-Ito (https://jfly.uni-koeln.de/color/), plus a neutral grey for "nothing here".
BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
WHITE = "#FFFFFF"
GREY = "#BBBBBB"
LIGHT_GREY = "#EEEEEE"

FONT = "Helvetica"


@dataclass(frozen=True)
class Style:
    """How one state is drawn: fill, text colour, symbol, word, border width and style."""

    fill: str
    text: str
    symbol: str
    word: str
    border: int = 1
    line: str = "solid"  # graphviz HTML-label cell STYLE: solid, dashed or dotted


# Replica roles in the cluster view.
LEADER = "leader"
IN_SYNC = "in-sync"
OUT_OF_SYNC = "out-of-sync"
OFFLINE = "offline"
EMPTY = "empty"  # padding row: keeps every broker box the same height

ROLE_STYLES: dict[str, Style] = {
    LEADER: Style(BLUE, WHITE, "★", "leader", border=3),
    IN_SYNC: Style(SKY_BLUE, BLACK, "●", "in sync"),
    OUT_OF_SYNC: Style(ORANGE, BLACK, "◌", "OUT OF SYNC", line="dashed"),
    OFFLINE: Style(GREY, BLACK, "✕", "offline", line="dotted"),
    EMPTY: Style(WHITE, WHITE, "", "", border=0),
}

# Offset cells in the log view.
COMMITTED = "committed"
UNCOMMITTED = "uncommitted"
CELL_STYLES: dict[str, Style] = {
    COMMITTED: Style(BLUISH_GREEN, WHITE, "", "committed (below HW)"),
    UNCOMMITTED: Style(YELLOW, BLACK, "?", "uncommitted (at or above HW)", line="dashed"),
}

# Consumer-group lag in the group view.
LAG_STYLES: dict[str, Style] = {
    "caught-up": Style(BLUISH_GREEN, WHITE, "✓", "caught up"),
    "lagging": Style(VERMILLION, WHITE, "▲", "lagging"),
    "no-commit": Style(GREY, BLACK, "–", "no committed offset", line="dotted"),
}
