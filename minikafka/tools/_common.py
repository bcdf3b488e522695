"""What Kafka's command-line tools share here: the --bootstrap-server flag, a bounded
check that a broker listens there, kafka-python clients made from it, Kafka-style
``--property k=v`` flags, and one-line errors with a non-zero exit.

The tools talk to any Kafka cluster through kafka-python, so the same command works
against `minikafka serve` and against the course's Docker cluster. This module keeps
kafka imports inside functions: building the parser must stay quick.
"""
from __future__ import annotations

import argparse
import re
import socket
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..quiet import kafka_python_quiet

# How long a tool tries to reach the bootstrap servers before it gives up.
CONNECT_TIMEOUT_S = 5.0

# kafka-python's error messages start "[Error 36] TopicAlreadyExistsError: ..."; the
# Kafka tools print only what follows.
_ERROR_PREFIX = re.compile(r"^\[Error -?\d+\] \w+: ")


class ToolError(Exception):
    """A failure the tool reports as one line on stderr, exiting 1."""


def one_line_errors(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Bad flags give one line (not argparse's usage block) and exit status 2."""
    def error(message: str) -> None:
        parser.exit(2, f"{parser.prog}: error: {message} (see {parser.prog} --help)\n")
    parser.error = error  # type: ignore[method-assign]
    return parser


def add_bootstrap(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT...]",
        help="the brokers to connect to, e.g. localhost:9092 (minikafka serve) or the "
             "Docker cluster's localhost:9092,localhost:9093,localhost:9094")


def servers(text: str) -> list[tuple[str, int]]:
    """HOST:PORT[,HOST:PORT...] as (host, port) pairs."""
    out = []
    for item in text.split(","):
        host, sep, port = item.strip().rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ToolError(f"--bootstrap-server must be HOST:PORT[,HOST:PORT...], got {text!r}")
        out.append((host.strip("[]"), int(port)))
    return out


def check_reachable(bootstrap: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Raise ToolError unless one of the servers accepts a TCP connection in time, so an
    unreachable cluster is reported in seconds rather than after client retries."""
    reasons = []
    for host, port in servers(bootstrap):
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                return
        except OSError as exc:
            reasons.append(f"{host}:{port} ({exc.strerror or exc})")
    raise ToolError(f"cannot connect to any bootstrap server: {', '.join(reasons)}. "
                    "Is the cluster running (minikafka serve, or docker compose up)?")


def admin_client(bootstrap: str) -> Any:
    """A kafka-python KafkaAdminClient, after checking the servers are reachable."""
    from kafka import KafkaAdminClient

    check_reachable(bootstrap)
    return KafkaAdminClient(bootstrap_servers=bootstrap, client_id="minikafka-tools",
                            bootstrap_timeout_ms=int(CONNECT_TIMEOUT_S * 1000),
                            request_timeout_ms=30_000)


def properties(items: Iterable[str], flag: str) -> dict[str, str]:
    """Repeated ``--flag key=value`` arguments as a dict."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ToolError(f"{flag} expects key=value, got {item!r}")
        out[key.strip()] = value
    return out


def read_config_file(path: str) -> dict[str, str]:
    """A Java-style .properties file (key=value lines, # comments)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise ToolError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return properties((line for line in lines if line.strip() and
                       not line.lstrip().startswith(("#", "!"))), path)


def client_config(kafka_props: Mapping[str, str], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Kafka client properties (acks=all, linger.ms=5) as kafka-python keyword arguments
    (acks='all', linger_ms=5). Unknown ones are reported and ignored, as Kafka's clients
    warn about a supplied configuration that isn't a known config."""
    out: dict[str, Any] = {}
    for key, raw in kafka_props.items():
        name = key.replace(".", "_").replace("-", "_")
        if name not in defaults:
            print(f"WARN The configuration '{key}' was supplied but isn't a known config.",
                  file=sys.stderr)
            continue
        out[name] = _value(raw)
    return out


def _value(raw: str) -> Any:
    text = raw.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text


def kafka_message(exc: BaseException) -> str:
    """An exception's message without kafka-python's "[Error N] Name: " prefix."""
    text = str(exc)
    stripped = _ERROR_PREFIX.sub("", text)
    return stripped or type(exc).__name__


def run_tool(body: Callable[[], int], prefix: str = "Error: ") -> int:
    """Run a tool; report failures in one line on stderr with exit status 1 (130 on
    Ctrl-C), the way the Kafka tools end with "Error: ..." instead of a traceback."""
    from kafka.errors import KafkaError

    try:
        with kafka_python_quiet():
            return body()
    except ToolError as exc:
        print(f"{prefix}{exc}", file=sys.stderr)
    except KafkaError as exc:
        print(f"{prefix}{type(exc).__name__}: {kafka_message(exc)}", file=sys.stderr)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `... | head` closed the pipe: not an error
        sys.stderr.close()
        return 0
    return 1
