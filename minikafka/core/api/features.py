"""UpdateFeatures (key 57, kafka-features.sh upgrade|downgrade): finalize feature levels,
all or nothing, with the checks and messages of Kafka's FeatureControlManager.

    >>> from minikafka.cluster import Cluster
    >>> cluster = Cluster(brokers=1)
    >>> try:
    ...     update_features(cluster, {"transaction.version": (9, "upgrade")})
    ... except errors.KafkaCoreError as exc:
    ...     print(exc.code, exc.message)
    95 Invalid update version 9 for feature transaction.version. Local controller 1 only supports versions 0-2
    >>> update_features(cluster, {"transaction.version": (1, "upgrade")})
    Traceback (most recent call last):
    ...
    minikafka.core.errors.KafkaCoreError: Invalid update version 1 for feature transaction.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.
    >>> update_features(cluster, {"transaction.version": (1, "safe_downgrade")})
    >>> cluster.features["transaction.version"]
    1
"""
from __future__ import annotations

from collections.abc import Mapping

from .. import errors
from ..features import feature_update_refused
from .port import ClusterPort


def update_features(cluster: ClusterPort, updates: Mapping[str, tuple[int, str]],
                    validate_only: bool = False) -> None:
    """Set each feature to its level ({name: (level, 'upgrade' | 'safe_downgrade' |
    'unsafe_downgrade')}), or raise KafkaCoreError(INVALID_UPDATE_VERSION) and set none."""
    controller = cluster.controller
    for name, (level, kind) in updates.items():
        reason = feature_update_refused(name, level, kind, controller.features.get(name, 0),
                                        controller.quorum.leader)
        if reason:
            raise errors.KafkaCoreError(
                errors.INVALID_UPDATE_VERSION,
                f"Invalid update version {level} for feature {name}. {reason}")
    if validate_only:
        return
    for name, (level, _) in updates.items():
        if controller.features.get(name, 0) != level:
            controller.set_feature_level(name, level)
            cluster.journal.record(cluster.now_ms, "feature.updated", feature=name, level=level)
    cluster.publish_metadata()
