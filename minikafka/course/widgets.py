"""Widgets over a function, so a lesson's experiment has controls in JupyterLab and
still runs top to bottom without a browser."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def explore(fn: Callable[..., Any], *, button: str | None = None, **controls: Any):
    """Widgets for ``fn``'s arguments, as ``ipywidgets.interactive`` makes them from the
    same abbreviations (a (min, max) or (min, max, step) tuple is a slider, a list a
    drop-down, a bool a check box, a fixed value stays fixed).

    With ``button`` (its caption), ``fn`` runs when the button is pressed: use it for
    anything that takes more than a moment. Without, it runs whenever a control
    changes. Either way nothing runs when the widget is created: the lesson calls
    ``fn`` in a plain code cell too, which is what runs when the notebook is executed
    without a browser (and a function running inside an Output widget while a notebook
    is executed headless can stall the executor).
    """
    import ipywidgets as W
    from IPython.display import display

    def run(**kwargs: Any) -> None:
        hint.layout.display = "none"
        result = fn(**kwargs)
        if result is not None:
            display(result)

    run.__name__ = getattr(fn, "__name__", "run")
    hint = W.HTML("<i>Press the button to run.</i>" if button else
                  "<i>Move a control to see the result.</i>")
    box = W.interactive(run, {"manual": True, "manual_name": button or "Run"}, **controls)
    if not button:
        box.manual_button.layout.display = "none"
        for control in box.kwargs_widgets:
            control.observe(box.update, names="value")
    box.children = (*box.children[:-1], hint, box.children[-1])
    return box
