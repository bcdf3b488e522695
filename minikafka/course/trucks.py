"""The course's running example, trucks reporting GPS positions, seeded so every student
gets the same data.

One record schema everywhere (lessons, labs, Spark jobs, graded assignments):
``TruckPosition``, keyed by the truck id (``truck-01``), its value the JSON document
``{"truck_id", "event_time", "latitude", "longitude", "speed_kmh"}``.

- ``truck_positions()``: what the labs stream to Spark, ``TruckPosition`` records with an
  event time, arriving a little out of order as real GPS feeds do.
- ``truck_reports()``: what the lessons produce, the same records as (key, value) pairs in
  rounds, each truck once a round.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

START = datetime(2024, 5, 6, 8, 0, tzinfo=UTC)  # the fleet's first report (event time)

# The value's schema as Spark SQL DDL, for from_json in the Spark labs and assignments.
SPARK_SCHEMA = ("truck_id STRING, event_time TIMESTAMP, latitude DOUBLE, longitude DOUBLE, "
                "speed_kmh DOUBLE")


@dataclass(frozen=True)
class TruckPosition:
    """One GPS report of one truck: the key is the truck id, so one truck's reports stay in
    order on one partition; the value is JSON with the event time in ISO 8601 UTC."""

    truck_id: str
    event_time_ms: int  # when the truck measured it (event time)
    latitude: float
    longitude: float
    speed_kmh: float

    def key(self) -> bytes:
        return self.truck_id.encode()

    def value(self) -> bytes:
        return json.dumps({"truck_id": self.truck_id, "event_time": _iso(self.event_time_ms),
                           "latitude": self.latitude, "longitude": self.longitude,
                           "speed_kmh": self.speed_kmh}, separators=(",", ":")).encode()

    @classmethod
    def from_value(cls, value: bytes | str) -> TruckPosition:
        """The record back from its JSON value."""
        d = json.loads(value)
        at = datetime.fromisoformat(d["event_time"].replace("Z", "+00:00"))
        return cls(d["truck_id"], round(at.timestamp() * 1000), d["latitude"],
                   d["longitude"], d["speed_kmh"])


def truck_id(n: int) -> str:
    """The id (and key) of truck number ``n``, counted from 1: ``truck-01``."""
    return f"truck-{n:02d}"


def truck_positions(trucks: int = 10, minutes: int = 20, every_s: int = 10, *, seed: int = 7,
                    start: datetime = START, max_delay_s: int = 20) -> list[TruckPosition]:
    """Every truck reports its position every `every_s` seconds for `minutes` minutes.

    Returned in the order they reach Kafka: by event time, except that some reports
    arrive up to `max_delay_s` late (a truck in a tunnel), as real GPS feeds do."""
    drives = _drive(random.Random(seed), trucks, minutes * 60 // every_s, every_s * 1000,
                    _ms(start), jitter_ms=1000, max_delay_ms=max_delay_s * 1000)
    return [p for _, p in sorted(drives, key=lambda ap: (ap[0], ap[1].event_time_ms,
                                                         ap[1].truck_id))]


def truck_reports(trucks: int = 5, reports: int = 3, seed: int = 1, every_ms: int = 20_000,
                  *, start: datetime = START) -> list[tuple[bytes, bytes]]:
    """GPS reports from a fleet as (key, value) pairs: ``reports`` rounds, each truck once a
    round (every 20 s, on time), trucks in order within a round."""
    drives = _drive(random.Random(seed), trucks, reports, every_ms, _ms(start))
    rounds = sorted((p for _, p in drives), key=lambda p: (p.event_time_ms, p.truck_id))
    return [(p.key(), p.value()) for p in rounds]


def _drive(rng: random.Random, trucks: int, reports: int, every_ms: int, start_ms: int, *,
           jitter_ms: int = 0, max_delay_ms: int = 0) -> Iterator[tuple[int, TruckPosition]]:
    """Each truck drives from a random spot near Utrecht at its own cruising speed, turning
    a little between reports; yields (arrival time, report). A report is measured up to
    `jitter_ms` after its slot and, one time in twenty, arrives up to `max_delay_ms` late."""
    for t in range(1, trucks + 1):
        lat, lon = 52.0 + rng.uniform(-0.5, 0.5), 5.0 + rng.uniform(-0.5, 0.5)
        cruise = rng.uniform(55, 95)  # each truck has its own typical speed
        heading = rng.uniform(0, 2 * math.pi)
        for i in range(reports):
            at = start_ms + i * every_ms + (rng.randrange(0, jitter_ms) if jitter_ms else 0)
            speed = max(0.0, rng.gauss(cruise, 8))
            heading += rng.gauss(0, 0.2)
            km = speed * every_ms / 3_600_000
            lat += km / 111 * math.cos(heading)
            lon += km / 111 * math.sin(heading) / math.cos(math.radians(lat))
            late = max_delay_ms and rng.random() < 0.05
            arrives = at + (rng.randrange(1, max_delay_ms) if late else 0)
            yield arrives, TruckPosition(truck_id(t), at, round(lat, 6), round(lon, 6),
                                         round(speed, 1))


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")
