"""Pure, deterministic Kafka machinery: standard library only."""
