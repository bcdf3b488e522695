"""Group configs (IncrementalAlterConfigs on GROUP resources) are checked as Kafka 4.4.0's
GroupConfig checks them, from its ConfigDef data and the broker's bounds."""
from __future__ import annotations

import pytest

from minikafka.core import errors
from minikafka.core.group_config import validate
from minikafka.core.kafka_configs import BROKER


def broker(key: str):
    return BROKER[key].default


@pytest.mark.parametrize(("config", "message"), [
    ({"consumer.session.timeout.ms": "44999"},
     "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."),
    ({"share.delivery.count.limit": "11"},
     "share.delivery.count.limit must be in the range 2 to 10 inclusive."),
    ({"streams.task.offset.interval.ms": "1000"},
     "streams.task.offset.interval.ms must be greater than or equal to 15000"),
    ({"share.delivery.count.limit": "1"},  # ConfigDef's own Range [2,...] comes first
     "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2"),
    ({"consumer.session.timeout.ms": "5s"},
     "Invalid value 5s for configuration consumer.session.timeout.ms: Not a number of type INT"),
    ({"retention.ms": "1"}, "Unknown group config name: retention.ms"),
    ({"share.auto.offset.reset": "by_duration:-PT1H"},
     "Invalid value by_duration:-PT1H for configuration share.auto.offset.reset: "
     "Invalid value `by_duration:-PT1H` for configuration share.auto.offset.reset. The value "
     "must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."),
    ({"streams.rack.aware.assignment.tags": "zone, zone"},
     "streams.rack.aware.assignment.tags must not contain duplicate tag keys."),
])
def test_refused_with_kafkas_message(config: dict, message: str) -> None:
    with pytest.raises(errors.KafkaCoreError) as caught:
        validate(config, broker)
    assert (caught.value.code, caught.value.message) == (errors.INVALID_CONFIG, message)


def test_bounds_follow_the_brokers_settings() -> None:
    settings = {"group.consumer.min.session.timeout.ms": 1000}
    assert validate({"consumer.session.timeout.ms": "6000"},
                    lambda key: settings.get(key, broker(key))) == {
        "consumer.session.timeout.ms": 6000}
    with pytest.raises(errors.KafkaCoreError):
        validate({"consumer.session.timeout.ms": "6000"}, broker)


def test_session_must_exceed_heartbeat() -> None:
    settings = {"group.share.min.session.timeout.ms": 1000}
    with pytest.raises(errors.KafkaCoreError) as caught:
        validate({"share.session.timeout.ms": "5000"}, lambda key: settings.get(key, broker(key)))
    assert caught.value.message == \
        "share.session.timeout.ms must be greater than share.heartbeat.interval.ms"


def test_accepted_values_are_parsed() -> None:
    assert validate({"share.auto.offset.reset": "by_duration:P1DT2H",
                     "share.isolation.level": "read_committed",
                     "streams.rack.aware.assignment.tags": "zone,rack"}, broker) == {
        "share.auto.offset.reset": "by_duration:P1DT2H",
        "share.isolation.level": "read_committed",
        "streams.rack.aware.assignment.tags": "zone,rack"}


def test_describe_a_group_lists_its_own_values_then_the_brokers() -> None:
    """DescribeConfigs of a GROUP: the group's own value first (DYNAMIC_GROUP_CONFIG), then
    the broker key that gives the default, with that key's source (here the broker's static
    setting); internal GroupConfig keys are not listed."""
    from minikafka import Cluster
    from minikafka.core.api import configs as api
    cluster = Cluster(brokers=1, broker_config={"group.share.record.lock.duration.ms": 20000})

    def entry(name: str) -> api.ConfigEntry:
        (result,) = api.describe_configs(cluster, [api.ConfigResource(api.GROUP, "g")])
        return {e.name: e for e in result.entries}[name]

    lock = entry("share.record.lock.duration.ms")
    assert (lock.value, lock.source, lock.synonyms) == ("20000", api.STATIC_BROKER_CONFIG, (
        api.ConfigSynonym("group.share.record.lock.duration.ms", "20000",
                          api.STATIC_BROKER_CONFIG),
        api.ConfigSynonym("group.share.record.lock.duration.ms", "30000", api.DEFAULT_CONFIG)))
    (done,) = api.incremental_alter_configs(cluster, [api.AlterConfigsResource(
        api.GROUP, "g", [api.AlterableConfig("share.record.lock.duration.ms", api.SET,
                                             "25000")])])
    assert done.error_code == errors.NONE
    lock = entry("share.record.lock.duration.ms")
    assert (lock.value, lock.source) == ("25000", api.DYNAMIC_GROUP_CONFIG)
    assert lock.synonyms[0] == api.ConfigSynonym("share.record.lock.duration.ms", "25000",
                                                 api.DYNAMIC_GROUP_CONFIG)
    assert entry("streams.assignor.name").synonyms == (
        api.ConfigSynonym("group.streams.assignors", "sticky", api.DEFAULT_CONFIG),)
    (result,) = api.describe_configs(cluster, [api.ConfigResource(api.GROUP, "g")])
    assert "streams.num.warmup.replicas" not in {e.name for e in result.entries}
