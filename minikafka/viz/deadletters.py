"""Where each record of an input topic went: processed into the output topic, or parked
in the dead-letter topic with the reason (`minikafka.examples.orders_app.Handled`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import graphviz

from .html import clip, td
from .palette import BLACK, BLUISH_GREEN, FONT, VERMILLION, WHITE

DESTINATIONS = {"valid": ("✓ orders.valid", BLUISH_GREEN, WHITE),
                "parked": ("✕ orders.DLT", VERMILLION, WHITE)}


def dead_letter_view(handled: Sequence[Any], *, source: str = "orders",
                     title: str = "each record of 'orders' and where the application sent it"
                     ) -> graphviz.Digraph:
    """One row per input record: its offset and value, the topic it went to (colour,
    symbol and name), and for a parked record the error."""
    rows = ["<TR>" + td(title, colspan=4, border=0, bold=True, point=12, align="LEFT") + "</TR>",
            "<TR>" + "".join(td(h, border=0, bold=True, point=11, align="LEFT") for h in (
                f"{source} offset", "value", "went to", "why")) + "</TR>"]
    for h in handled:
        value = "(none)" if h.value is None else h.value.decode("utf-8", "replace")
        text, fill, colour = DESTINATIONS[h.outcome]
        rows.append("<TR>" + td(str(h.offset), border=0, point=11, align="RIGHT")
                    + td(clip(value, 30), border=1, point=11, align="LEFT", color=BLACK)
                    + td(text, fill=fill, color=colour, border=1, point=11, bold=True)
                    + td(clip(h.error, 48) if h.error else "", border=0, point=11,
                         align="LEFT") + "</TR>")
    g = graphviz.Digraph("deadletters", graph_attr={"fontname": FONT},
                         node_attr={"shape": "plain", "fontname": FONT})
    g.node("deadletters", '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="3" CELLPADDING="3">'
                          + "".join(rows) + "</TABLE>>")
    return g
