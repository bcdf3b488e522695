"""The labs' charts: matplotlib when it is installed, else the same as text."""

from __future__ import annotations

from typing import Any


def lines(series: dict[str, list[tuple[float, float]]], *, title: str, xlabel: str = "",
          ylabel: str = "") -> None:
    """Line chart of (x, y) points per series with matplotlib, else one text sparkline each."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"{title}   (text chart: `pip install matplotlib` draws it)")
        ticks = " ▁▂▃▄▅▆▇█"
        top = max((y for points in series.values() for _, y in points), default=0) or 1
        width = max((len(name) for name in series), default=0)
        for name, points in series.items():
            spark = "".join(ticks[round(8 * y / top)] for _, y in points)
            print(f"  {name:>{width}} |{spark}|")
        xs = [x for points in series.values() for x, _ in points]
        if xs:
            print(f"  {'':>{width}}  {xlabel} {min(xs):g} .. {max(xs):g}; top = {top:g} {ylabel}")
        return
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for name, points in series.items():
        ax.plot([x for x, _ in points], [y for _, y in points], label=name)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    fig.tight_layout()
    plt.show()


def bars(values: dict[Any, float], *, title: str, xlabel: str = "", ylabel: str = "") -> None:
    """A bar chart with matplotlib when it is installed, else the same as text bars."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"{title}   (text chart: `pip install matplotlib` draws it)")
        width = max(len(str(k)) for k in values) if values else 0
        top = max(values.values(), default=0) or 1
        for key, value in values.items():
            print(f"  {str(key):>{width}} | {'█' * round(40 * value / top):<40} {value:,.4g}")
        return
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.bar([str(k) for k in values], list(values.values()), color="#0072B2")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.tight_layout()
    plt.show()
