"""The optional parts of minikafka and the extra that installs each.

`pip install minikafka` gets the core, the in-process clients and `minikafka serve`; the
lessons' pictures and widgets need `minikafka[course]`, the Spark source `minikafka[labs]`.
A module that needs an extra's packages calls ``require`` first, so a missing package is
named with the command that installs it, not met as a bare ImportError deep inside.
"""

from __future__ import annotations

import importlib.util

# What each extra of pyproject.toml installs, by the modules its packages provide.
EXTRAS: dict[str, tuple[str, ...]] = {
    "course": ("graphviz", "ipywidgets", "jupyterlab", "matplotlib", "fastavro"),
    "labs": ("pyspark", "pyarrow", "numpy"),
    "grading": ("nbgrader",),
    "tls": ("cryptography",),
    "lite": ("jupyterlite_core", "jupyterlite_pyodide_kernel", "packaging"),
}


def install_hint(extra: str) -> str:
    return f"pip install 'minikafka[{extra}]'"


def require(extra: str, *modules: str, what: str) -> None:
    """Raise ModuleNotFoundError naming the extra when one of ``modules`` (by default all of
    the extra's) is not installed. Looks them up without importing them (matplotlib and
    jupyterlab are slow to import, and most lessons never use them)."""
    for name in modules or EXTRAS[extra]:
        if importlib.util.find_spec(name) is None:
            raise ModuleNotFoundError(
                f"{what} needs {name}, from minikafka's [{extra}] extra: "
                f"{install_hint(extra)}", name=name)
