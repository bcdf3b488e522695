"""The browser edition's build error."""
from __future__ import annotations

__all__ = ["BuildError"]


class BuildError(RuntimeError):
    """A build step failed; the message says which and how to fix it."""
