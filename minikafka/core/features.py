"""KRaft feature levels (KIP-584): the ones a new cluster finalizes, the ones a broker
supports (ApiVersions' SupportedFeatures) and when UpdateFeatures refuses a change."""

from __future__ import annotations

# Finalized feature levels of a new cluster (kafka-storage.sh format --feature NAME=LEVEL).
FEATURE_DEFAULTS = {"eligible.leader.replicas.version": 1}  # Kafka 4.1+
# The levels a broker supports (ApiVersions' SupportedFeatures), lowest and highest.
SUPPORTED_FEATURES = {"eligible.leader.replicas.version": (0, 1)}


def feature_update_refused(name: str, level: int, kind: str, current: int,
                           controller_id: int | None) -> str | None:
    """Why Kafka's FeatureControlManager refuses to set `name` to `level`, or None."""
    if level < 0:
        return "A feature version cannot be less than 0."
    supported = SUPPORTED_FEATURES.get(name)
    if supported is None:
        return f"Local controller {controller_id} does not support this feature."
    low, high = supported
    if level != 0 and not low <= level <= high:
        return f"Local controller {controller_id} only supports versions {low}-{high}"
    if level < current and kind == "upgrade":
        return ("Can't downgrade the version of this feature without setting the upgrade "
                "type to either safe or unsafe downgrade.")
    return None
