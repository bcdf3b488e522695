"""All scenario modules, imported for their registrations."""
from . import s_produce  # noqa: F401
