"""The message specs minikafka carries for APIs kafka-python lacks are Kafka's own.

minikafka/wire/schemas holds Apache Kafka's JSON message specs for the target release; this
compares each with the one inside that release's kafka-clients jar (fetched from Maven like
the rest of Kafka's jars), so a spec can neither drift nor be edited by hand.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

import minikafka.wire.schemas as schemas
from minikafka.realkafka import KAFKA_VERSION
from minikafka.realkafka.jars import fetch_kafka
from minikafka.wire import messages

SPECS = sorted(Path(schemas.__file__).parent.glob("*.json"))


def test_every_message_class_has_its_spec_and_back():
    names = {p.stem for p in SPECS}
    assert names == set(messages.__all__)


@pytest.mark.real_kafka
@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_spec_is_the_jar_s(spec: Path):
    jar = fetch_kafka() / f"kafka-clients-{KAFKA_VERSION}.jar"
    with zipfile.ZipFile(jar) as z:
        assert spec.read_bytes() == z.read(f"common/message/{spec.name}")
