"""The course's running example, trucks reporting GPS positions, seeded so every student
gets the same data.

- ``truck_positions()``: what the labs stream to Spark, ``TruckPosition`` records with an
  event time, arriving a little out of order as real GPS feeds do.
- ``truck_reports()``: what the lessons produce, (key, JSON value) pairs in rounds, each
  truck once a round.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True)
class TruckPosition:
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


def truck_positions(trucks: int = 10, minutes: int = 20, every_s: int = 10, *, seed: int = 7,
                    start: datetime = datetime(2024, 5, 6, 8, 0, tzinfo=UTC),
                    max_delay_s: int = 20) -> list[TruckPosition]:
    """Every truck reports its position every `every_s` seconds for `minutes` minutes.

    Returned in the order they reach Kafka: by event time, except that some reports
    arrive up to `max_delay_s` late (a truck in a tunnel), as real GPS feeds do."""
    rng = random.Random(seed)
    start_ms = int(start.timestamp() * 1000)
    events = []
    for t in range(trucks):
        truck = f"truck-{t + 1:02d}"
        lat, lon = 52.0 + rng.uniform(-0.5, 0.5), 5.0 + rng.uniform(-0.5, 0.5)
        cruise = rng.uniform(55, 95)  # each truck has its own typical speed
        heading = rng.uniform(0, 2 * math.pi)
        for i in range(minutes * 60 // every_s):
            at = start_ms + i * every_s * 1000 + rng.randrange(0, 1000)
            speed = max(0.0, rng.gauss(cruise, 8))
            heading += rng.gauss(0, 0.2)
            km = speed * every_s / 3600
            lat += km / 111 * math.cos(heading)
            lon += km / 111 * math.sin(heading) / math.cos(math.radians(lat))
            arrives = at + (rng.randrange(1, max_delay_s * 1000) if rng.random() < 0.05 else 0)
            events.append((arrives, at, truck, round(lat, 6), round(lon, 6), round(speed, 1)))
    events.sort()
    return [TruckPosition(truck, at, lat, lon, speed) for _, at, truck, lat, lon, speed in events]


def truck_reports(trucks: int = 5, reports: int = 3, seed: int = 1,
                    every_ms: int = 20_000) -> list[tuple[bytes, bytes]]:
    """GPS reports from a fleet: ``reports`` rounds, each truck once a round (every
    20 s), as (key, JSON value) pairs. The key is the truck id, so one truck's reports
    stay in order on one partition."""
    rng = random.Random(seed)
    where = {t: (52.0 + rng.random(), 4.0 + rng.random()) for t in range(1, trucks + 1)}
    out = []
    for r in range(reports):
        for t in range(1, trucks + 1):
            lat, lon = where[t]
            lat, lon = lat + rng.uniform(-0.01, 0.01), lon + rng.uniform(-0.01, 0.01)
            where[t] = (lat, lon)
            value = {"truck_id": f"truck-{t}", "lat": round(lat, 5), "lon": round(lon, 5),
                     "speed_kmh": rng.randint(0, 90), "report": r,
                     "at_s": r * every_ms // 1000}
            out.append((f"truck-{t}".encode(), json.dumps(value).encode()))
    return out


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")
