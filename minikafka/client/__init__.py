"""In-process clients shaped like kafka-python's KafkaProducer, KafkaConsumer and KafkaAdminClient."""
