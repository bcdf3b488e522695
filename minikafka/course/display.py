"""How course objects show in a notebook: the widget in a live kernel, HTML elsewhere."""
from __future__ import annotations

from typing import Any


def widget_bundle(text: str, html: str, widget: Any, include: Any = None,
                  exclude: Any = None) -> dict:
    """A mime bundle with plain text, HTML and, when a kernel can show it, the widget's
    view. A page without widget state (a static viewer, an exported notebook) shows the
    HTML; a kernel without ipywidgets, the text."""
    bundle = {"text/plain": text, "text/html": html}
    try:
        shown = widget._repr_mimebundle_(include=include, exclude=exclude)
    except Exception:  # no ipywidgets or no kernel: the text will do
        shown = None
    if shown:
        data = shown[0] if isinstance(shown, tuple) else shown
        view = data.get("application/vnd.jupyter.widget-view+json")
        if view is not None:
            bundle["application/vnd.jupyter.widget-view+json"] = view
    return bundle
