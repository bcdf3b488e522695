"""minikafka: an in-process, deterministic Kafka cluster for teaching."""
