"""Kafka 4.4.0's message specs for the APIs kafka-python does not define (see README.md)."""
