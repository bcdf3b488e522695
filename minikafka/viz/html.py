"""Small builders for graphviz HTML-like labels (tables are cheap to lay out: one node
per box instead of one node per row)."""

from __future__ import annotations

from html import escape as _escape

from minikafka.core.clock import EPOCH_MS

from .palette import FONT, Style

# The notebook's output area, 848 px in a 1280-px JupyterLab with the file browser open,
# in graphviz's unit (1 pt = 4/3 px), less dot's margin (4 pt a side): the widest a
# picture's content may be.
OUTPUT_PT = 628
# Widths in em of the characters as Debian's dot lays out Helvetica (measured: the
# narrowest FIXEDSIZE cell that holds 20 of each without a warning); others count wide.
_EM = {**dict.fromkeys("abdeghknopquvxy0123456789EFPSTY", .6), **dict.fromkeys("csz_L", .525),
       **dict.fromkeys("ijl .,·:;|'/IJ", .3), **dict.fromkeys("frt!-()", .375),
       **dict.fromkeys("ABCKRVXZ", .675), **dict.fromkeys("DGHNOQU▼▲", .75),
       **dict.fromkeys("mW…", .975), **dict.fromkeys("w✓✕", .825), "M": .9}


def text_pt(text: str, point: float, *, bold: bool = False) -> int:
    """The width of one line of `text` in points at `point` size, as dot lays it out
    (rounded up; bold about 12% wider): what a FIXEDSIZE cell needs, less its padding."""
    em = sum(_EM.get(c, 0.9) for c in text)
    return int(em * point * (1.125 if bold else 1) + 0.999)


def sim_time(ms: int) -> str:
    """Simulated time as seconds since the cluster's clock started (its epoch)."""
    return f"t = {(ms - EPOCH_MS) / 1000:.3f} s"


def clip(text: str, n: int) -> str:
    """Cut text to n characters with an ellipsis: fixed-size cells must not overflow."""
    return text if len(text) <= n else text[: n - 1] + "…"


def clip_middle(text: str, n: int) -> str:
    """Cut text to n characters by its middle: keys such as customer-0 and customer-1
    differ at the end, so the end is kept."""
    if len(text) <= n:
        return text
    tail = n // 2
    return text[: n - 1 - tail] + "…" + text[len(text) - tail:]


def esc(text: object) -> str:
    """Escape text for an HTML-like label (graphviz rejects a bare & or <)."""
    return _escape(str(text), quote=True)


def wrap(tag: str, body: str, attrs: str = "") -> str:
    """<TAG attrs>body</TAG>, or nothing when body is empty: Graphviz 2.43 (Debian 12)
    rejects an empty <B></B>, <I></I> or <FONT></FONT> as a syntax error; newer ones
    accept it. Every formatting tag of a label goes through here."""
    if not body:
        return ""
    return f"<{tag}{' ' + attrs if attrs else ''}>{body}</{tag}>"


def bold(body: str) -> str:
    return wrap("B", body)


def italic(body: str) -> str:
    return wrap("I", body)


def font(body: str, *, color: str | None = None, point: float | None = None,
         face: str | None = None) -> str:
    attrs = [f'FACE="{face}"'] if face else []
    if color:
        attrs.append(f'COLOR="{color}"')
    if point:
        attrs.append(f'POINT-SIZE="{point:g}"')
    return wrap("FONT", body, " ".join(attrs))


def td(text: str, *, style: Style | None = None, width: int | None = None,
       height: int | None = None, port: str | None = None, align: str = "CENTER",
       bold: bool = False, italic: bool = False, colspan: int = 1, fill: str | None = None,
       color: str | None = None, border: int | None = None, line: str | None = None,
       sides: str | None = None, point: float | None = None, raw: bool = False) -> str:
    """One table cell. `text` is escaped unless raw=True; <BR/> may be passed raw."""
    attrs = []
    if style is not None:
        fill = fill or style.fill
        color = color or style.text
        border = style.border if border is None else border
        line = line or style.line
    if fill:
        attrs.append(f'BGCOLOR="{fill}"')
    if border is not None:
        attrs.append(f'BORDER="{border}"')
    if line and line != "solid":
        attrs.append(f'STYLE="{line}"')
    if sides:
        attrs.append(f'SIDES="{sides}"')
    if width is not None or height is not None:
        # FIXEDSIZE keeps a box the same size whatever it says, so layouts stay put.
        attrs.append('FIXEDSIZE="TRUE"')
        if width is not None:
            attrs.append(f'WIDTH="{width}"')
        if height is not None:
            attrs.append(f'HEIGHT="{height}"')
    if port:
        attrs.append(f'PORT="{port}"')
    if colspan > 1:
        attrs.append(f'COLSPAN="{colspan}"')
    attrs.append(f'ALIGN="{align}"')
    body = text if raw else esc(text)
    if bold:
        body = wrap("B", body)
    if italic:
        body = wrap("I", body)
    body = font(body, color=color, point=point, face=FONT)
    return f"<TD {' '.join(attrs)}>{body}</TD>"


def table(rows: list[list[str]], *, border: int = 1, cellspacing: int = 2,
          cellpadding: int = 3, color: str | None = None, line: str | None = None,
          bgcolor: str | None = None) -> str:
    """A whole label: <<TABLE>...</TABLE>> from rows of td() strings."""
    attrs = [f'BORDER="{border}"', 'CELLBORDER="1"', f'CELLSPACING="{cellspacing}"',
             f'CELLPADDING="{cellpadding}"']
    if color:
        attrs.append(f'COLOR="{color}"')
    if line and line != "solid":
        attrs.append(f'STYLE="{line}"')
    if bgcolor:
        attrs.append(f'BGCOLOR="{bgcolor}"')
    body = "".join(f"<TR>{''.join(r)}</TR>" for r in rows)
    return f"<<TABLE {' '.join(attrs)}>{body}</TABLE>>"
