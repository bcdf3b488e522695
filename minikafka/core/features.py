"""KRaft feature levels (KIP-584): the ones a new cluster finalizes, the ones a broker
supports (ApiVersions' SupportedFeatures) and when UpdateFeatures refuses a change."""

from __future__ import annotations

from .kafka_configs import FEATURES

# The levels a broker supports (ApiVersions' SupportedFeatures), lowest and highest, and
# the levels a new cluster finalizes (kafka-storage.sh format --feature NAME=LEVEL): Kafka
# 4.4.0's (core.kafka_configs.FEATURES), but for kraft.version, which stays 0, as on a
# cluster whose controller.quorum.voters are static (compose's and the native launcher's).
# transaction.version 2 turns on transactions V2 in the clients (KIP-890 part 2,
# core.transactions); a cluster finalized at 1 keeps them on V1.
SUPPORTED_FEATURES: dict[str, tuple[int, int]] = {
    name: (spec["min"], spec["max"]) for name, spec in FEATURES.items()}
FEATURE_DEFAULTS: dict[str, int] = {
    name: 0 if name == "kraft.version" else spec["default"] for name, spec in FEATURES.items()}


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
