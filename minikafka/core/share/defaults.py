"""The share-group broker settings (KIP-932) and their defaults: read by the share-group
coordinator and listed among the broker's configs (core.config)."""

from __future__ import annotations

# Broker configs (GroupCoordinatorConfig, ShareGroupConfig) with Kafka 4.4.0's defaults.
SHARE_DEFAULTS: dict[str, int] = {
    "group.share.session.timeout.ms": 45_000,
    "group.share.heartbeat.interval.ms": 5_000,
    "group.share.max.size": 200,
    "group.share.record.lock.duration.ms": 30_000,
    "group.share.min.record.lock.duration.ms": 15_000,
    "group.share.max.record.lock.duration.ms": 60_000,
    "group.share.delivery.count.limit": 5,
    "group.share.min.delivery.count.limit": 2,
    "group.share.max.delivery.count.limit": 10,
    "group.share.partition.max.record.locks": 2_000,
    "group.share.min.partition.max.record.locks": 100,
    "group.share.max.partition.max.record.locks": 4_000,
}
