"""Windows on the Kafka record timestamp (arrival time) instead of the reading's own event
time: right while readings arrive on time, wrong for late ones."""

EXPECTED_POINTS = 4
RUNAWAY_CELL = None

CELLS = {
    "speed_per_window": '''
def speed_per_window(events):
    readings = events.select(
        F.from_json(F.col("value").cast("string"), SPARK_SCHEMA).alias("r"),
        "timestamp").select("r.*", "timestamp")
    return (readings.groupBy(F.window("timestamp", "1 minute"), "truck_id")
            .agg(F.count("*").alias("readings"), F.avg("speed_kmh").alias("avg_speed"))
            .select(F.col("window.start").alias("window_start"), "truck_id", "readings", "avg_speed"))
''',
}
