"""Real Apache Kafka beside minikafka: the release the course targets, run natively from its jars.

    minikafka kafka fetch      # Kafka's jars from Maven Central, once, into the cache
    minikafka kafka up         # three KRaft nodes on 127.0.0.1:9092-9094, like docker/compose.yaml
    minikafka kafka status     # nodes, pids, ports, the active controller, the version
    minikafka kafka stop 2     # a clean shutdown of node 2 (kill 2: SIGKILL; start 2: back)
    minikafka kafka down       # every node stopped; the data stays until you delete it

The release is KAFKA_VERSION, one constant: docker/compose.yaml's image tag, the lessons'
"Kafka 4.x" and the fidelity suite all name it (tests check they agree).
"""
from __future__ import annotations

KAFKA_VERSION = "4.4.0"
SCALA_VERSION = "2.13"

__all__ = ["KAFKA_VERSION", "SCALA_VERSION"]
