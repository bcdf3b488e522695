"""customers.csv, lab 6's data: seeded, so the same rows every time and everywhere."""

from __future__ import annotations

import csv
import os
import random
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

CUSTOMERS_ROWS = 12_434
CUSTOMER_FIELDS = ("customer_id", "first_name", "last_name", "email", "country", "city",
                   "signup_date", "lifetime_value")

_FIRST = ("Ada", "Ben", "Chloe", "Daan", "Emma", "Finn", "Grace", "Hugo", "Ines", "Jan", "Kim",
          "Lars", "Mila", "Noah", "Olga", "Pim", "Quinn", "Rosa", "Sam", "Tess", "Umar", "Vera",
          "Wim", "Xena", "Yara", "Zeno")
_LAST = ("Jansen", "de Vries", "Bakker", "Visser", "Smit", "Meijer", "Mulder", "Bos", "Vos",
         "Peters", "Hendriks", "Dekker", "Brouwer", "Dijkstra", "Kok", "Schouten")
_CITIES = {"NL": ("Amsterdam", "Rotterdam", "Utrecht", "Eindhoven"),
           "BE": ("Brussels", "Antwerp", "Ghent"),
           "DE": ("Berlin", "Hamburg", "Cologne", "Munich"),
           "FR": ("Paris", "Lyon", "Lille"),
           "GB": ("London", "Leeds", "Bristol")}


def customer_rows(rows: int = CUSTOMERS_ROWS, *, seed: int = 2024) -> Iterator[dict[str, str]]:
    """The rows of customers.csv: the same `rows` rows for the same seed, every time."""
    rng = random.Random(seed)
    countries = sorted(_CITIES)
    first_day = date(2019, 1, 1)
    for i in range(rows):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        country = rng.choices(countries, weights=(2, 2, 3, 2, 6))[0]
        yield {
            "customer_id": f"C{i + 1:05d}",
            "first_name": first,
            "last_name": last,
            "email": f"{first}.{last.replace(' ', '')}.{i + 1}@example.com".lower(),
            "country": country,
            "city": rng.choice(_CITIES[country]),
            "signup_date": (first_day + timedelta(days=rng.randrange(5 * 365))).isoformat(),
            "lifetime_value": f"{rng.lognormvariate(5, 1):.2f}",
        }


def write_customers_csv(path: str | os.PathLike, rows: int = CUSTOMERS_ROWS, *,
                        seed: int = 2024) -> Path:
    """Write customers.csv (a header and `rows` rows) and return its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CUSTOMER_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(customer_rows(rows, seed=seed))
    return path
