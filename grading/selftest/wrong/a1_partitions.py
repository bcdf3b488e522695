"""Keys by driver (breaks order when drivers swap trucks), predicts placements with the
wrong hash (CRC-32 instead of murmur2) and gets the partition-growth function right."""

EXPECTED_POINTS = 2
RUNAWAY_CELL = None

CELLS = {
    "predict_placements": '''
def predict_placements(truck_ids, num_partitions):
    import zlib
    return {truck: zlib.crc32(truck.encode()) % num_partitions for truck in truck_ids}
''',
    "truck_key": '''
def truck_key(event):
    return event["driver"].encode()
''',
    "moved_trucks": '''
def moved_trucks(truck_ids, old_partitions, new_partitions):
    return {t for t in truck_ids
            if partition_for_key(t.encode(), old_partitions) != partition_for_key(t.encode(), new_partitions)}
''',
    "explain_partitions": "Nothing breaks: Kafka moves the old records to their new partitions.",
}
