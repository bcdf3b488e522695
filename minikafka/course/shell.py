"""Kafka's command-line tools from a notebook: ``cli()`` runs `minikafka <command>` as a shell
would, ``parse_table()`` reads the tables they print."""

from __future__ import annotations

import shlex
import subprocess
import sys


def parse_table(output: str) -> list[dict[str, str]]:
    """Rows of a Kafka tool's table (a header line of UPPER-CASE column names, then rows
    split on whitespace), e.g. kafka-consumer-groups --describe."""
    rows, header = [], None
    for line in output.splitlines():
        words = line.split()
        if not words:
            continue
        if header is None:
            if len(words) > 2 and all(w.isupper() or "-" in w for w in words):
                header = words
            continue
        if len(words) >= len(header):
            rows.append(dict(zip(header, words)))
    return rows


def cli(command: str, *, input: str | None = None, timeout_s: float = 120) -> str:
    """Run `minikafka <command>` (Kafka's tools: topics, console-producer, ...) like a shell
    would, print what it prints and return its output. Raises if it fails."""
    args = [sys.executable, "-m", "minikafka.cli", *shlex.split(command)]
    done = subprocess.run(args, input=input, capture_output=True, text=True, timeout=timeout_s)
    output = done.stdout + done.stderr
    print(f"$ minikafka {command}")
    print(output.rstrip())
    if done.returncode != 0:
        raise RuntimeError(f"minikafka {command.split()[0]} failed with exit code "
                           f"{done.returncode}")
    return output
