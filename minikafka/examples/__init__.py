"""Small Kafka applications the lessons use as worked examples. Each is written against
kafka-python's client API only (the consumer and producer come in as arguments), so the
same code runs on minikafka in a test and on a real cluster in production."""
