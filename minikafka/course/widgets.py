"""Widgets over a function, so a lesson's experiment has controls in JupyterLab and
still runs top to bottom without a browser."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any


def explore(fn: Callable[..., Any], *, button: str | None = None, **controls: Any):
    """Widgets for ``fn``'s arguments, as ``ipywidgets.interactive`` makes them from the
    same abbreviations (a (min, max) or (min, max, step) tuple is a slider, a list a
    drop-down, a bool a check box, a fixed value stays fixed).

    Without ``button``, the result for the default choices shows at once, and ``fn``
    runs again whenever a control changes. With ``button`` (its caption), ``fn`` runs
    when the button is pressed: use it for anything that takes more than a moment.

    The first result is computed while the widget is created, outside any Output widget,
    and shown as HTML: a function running inside an Output widget while a notebook is
    executed headless can stall the executor. Strings show as text and dicts one entry a
    line, not as quoted Python values.
    """
    import ipywidgets as W

    def run(**kwargs: Any) -> None:
        first.layout.display = "none"
        _show(fn(**kwargs))

    run.__name__ = getattr(fn, "__name__", "run")
    first = W.HTML("<i>Press the button to run.</i>" if button else "")
    box = W.interactive(run, {"manual": True, "manual_name": button or "Run"}, **controls)
    if not button:
        box.manual_button.layout.display = "none"
        for control in box.kwargs_widgets:
            control.observe(box.update, names="value")
        defaults = {w._kwarg: w.get_interact_value() for w in box.kwargs_widgets}
        first.value = _captured_html(lambda: _show(fn(**defaults)))
    box.children = (*box.children[:-1], first, box.children[-1])
    return box


def _show(result: Any) -> None:
    """Display a result readably: text as text, a dict one ``key: value`` line each."""
    if result is None:
        return
    if isinstance(result, dict):
        result = "\n".join(f"{k}: {v}" for k, v in result.items())
    if isinstance(result, str):
        print(result)
        return
    from IPython.display import display

    display(result)


def _captured_html(show: Callable[[], None]) -> str:
    """What ``show`` prints and displays, as one piece of HTML."""
    from IPython.utils.capture import capture_output

    with capture_output() as captured:
        show()
    parts = [f"<pre>{html.escape(captured.stdout)}</pre>"] if captured.stdout else []
    for output in captured.outputs:
        data = output.data
        if "text/html" in data:
            parts.append(data["text/html"])
        elif "image/svg+xml" in data:
            svg = data["image/svg+xml"]
            parts.append(svg[max(svg.find("<svg"), 0):])  # inline: no XML prolog
        elif "text/plain" in data:
            parts.append(f"<pre>{html.escape(data['text/plain'])}</pre>")
    return "".join(parts)
