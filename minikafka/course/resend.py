"""A produce request sent twice byte for byte, as a producer's retry after a lost response
does: what idempotence is for (lab 2)."""

from __future__ import annotations

import time
from typing import Any

from minikafka.course.lab_cluster import bootstrap_servers


def resend_batch(topic: str, partition: int, values: list[bytes], *, idempotent: bool,
                 attempts: int = 2) -> list[int]:
    """Send one record batch `attempts` times, byte for byte, as a producer does when a
    produce response is lost and it retries; the base offset the broker answered each time.

    With idempotence the batch carries a producer id and sequence number (from
    InitProducerId) and the broker recognises the retry as a duplicate."""
    from kafka.net.compat import KafkaNetClient
    from kafka.protocol.producer import ProduceRequest
    from kafka.record.default_records import DefaultRecordBatchBuilder
    from kafka.structs import TopicPartition

    client = KafkaNetClient(bootstrap_servers=bootstrap_servers().split(","),
                            client_id="lab-resend")
    try:
        client.check_version()
        client.poll(future=client.cluster.add_topic(topic), timeout_ms=10_000)
        leader = client.cluster.leader_for_partition(TopicPartition(topic, partition))
        pid = epoch = sequence = -1
        if idempotent:
            pid, epoch = _init_producer_id(client, leader)
            sequence = 0
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                            producer_id=pid, producer_epoch=epoch,
                                            base_sequence=sequence, batch_size=1 << 20)
        now = time.time_ns() // 1_000_000
        for i, value in enumerate(values):
            builder.append(i, timestamp=now, key=None, value=value, headers=[])
        data = bytes(builder.build())
        request = ProduceRequest(transactional_id=None, acks=-1, timeout_ms=10_000, topic_data=[
            ProduceRequest.TopicProduceData(name=topic, partition_data=[
                ProduceRequest.TopicProduceData.PartitionProduceData(index=partition,
                                                                     records=data)])],
            max_version=12)  # v13+ names topics by id
        offsets = []
        for _ in range(attempts):
            answer = client.send_and_receive(leader, request)
            part = answer.responses[0].partition_responses[0]
            if part.error_code:
                from kafka.errors import for_code

                raise for_code(part.error_code)(f"produce to {topic}-{partition}")
            offsets.append(part.base_offset)
        return offsets
    finally:
        client.close()


def _init_producer_id(client: Any, node: int, *, timeout_s: float = 30) -> tuple[int, int]:
    """A producer id and epoch from InitProducerId, retried as producers do: a Kafka broker
    answers COORDINATOR_LOAD_IN_PROGRESS until its first block of ids has arrived from
    the controller (on a new cluster, the first idempotent producer it serves)."""
    from kafka.errors import NoError, for_code
    from kafka.protocol.producer import InitProducerIdRequest

    deadline = time.monotonic() + timeout_s
    while True:
        answer = client.send_and_receive(node, InitProducerIdRequest(
            transactional_id=None, transaction_timeout_ms=60_000, producer_id=-1,
            producer_epoch=-1))
        error = for_code(answer.error_code)
        if error is NoError:
            return answer.producer_id, answer.producer_epoch
        if not error.retriable or time.monotonic() > deadline:
            raise error("InitProducerId")
        time.sleep(0.1)
