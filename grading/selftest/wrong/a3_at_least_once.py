"""Commits before processing (at-most-once): a crash while processing skips orders."""

EXPECTED_POINTS = 5
RUNAWAY_CELL = None

CELLS = {
    "consumer_config": '''
CONSUMER_CONFIG = {"enable_auto_commit": False, "auto_offset_reset": "earliest"}
''',
    "consume": '''
def consume(consumer, process, stop):
    while not stop():
        batch = consumer.poll(timeout_ms=500)
        if batch:
            consumer.commit()
            for records in batch.values():
                for record in records:
                    process(record)
''',
}
