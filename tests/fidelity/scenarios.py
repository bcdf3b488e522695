"""All scenario modules, imported for their registrations."""
from . import (  # noqa: F401
    s_admin,
    s_configs,
    s_errors,
    s_failover,
    s_groups,
    s_outside,
    s_produce,
    s_share,
    s_txn,
)
