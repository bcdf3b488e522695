"""The differential fidelity suite: each scenario runs against real Apache Kafka and against
minikafka (served, and in process where it can be said with minikafka's own clients); the
observations must match, or the difference is listed in known.py with its reason."""
