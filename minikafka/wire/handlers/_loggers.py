"""BROKER_LOGGER resources (kafka-configs.sh --entity-type broker-loggers): a broker's
loggers and their levels, described and changed at run time as Kafka's Log4jController
does. minikafka's loggers are Python's: `root` and those under `minikafka`, with log4j's
level names (Python's WARNING is log4j's WARN, CRITICAL its FATAL)."""
from __future__ import annotations

import logging
from typing import Any

from ...core import errors
from ...core.errors import KafkaCoreError
from ._common import INVALID_REQUEST

ROOT = "root"
VALID_LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")
_TO_LOG4J = {logging.CRITICAL: "FATAL", logging.ERROR: "ERROR", logging.WARNING: "WARN",
             logging.INFO: "INFO", logging.DEBUG: "DEBUG", logging.NOTSET: "ALL"}
_TO_PYTHON = {"OFF": logging.CRITICAL + 10, "FATAL": logging.CRITICAL, "ERROR": logging.ERROR,
              "WARN": logging.WARNING, "INFO": logging.INFO, "DEBUG": logging.DEBUG,
              "TRACE": logging.DEBUG - 5, "ALL": 1}
SET, DELETE = 0, 1


def _logger(name: str) -> logging.Logger:
    return logging.getLogger() if name == ROOT else logging.getLogger(name)


def loggers() -> dict[str, str]:
    """{logger name: log4j level}, the root logger first."""
    names = sorted(n for n in logging.root.manager.loggerDict
                   if n == "minikafka" or n.startswith("minikafka."))
    return {name: level_name(_logger(name).getEffectiveLevel()) for name in [ROOT, *names]}


def level_name(level: int) -> str:
    if level >= _TO_PYTHON["OFF"]:
        return "OFF"
    return _TO_LOG4J.get(level) or ("TRACE" if level < logging.DEBUG else logging.getLevelName(level))


def alter(configs: Any, validate_only: bool) -> None:
    """IncrementalAlterConfigs on a BROKER_LOGGER: SET a logger's level, DELETE it (back to
    the root logger's); Kafka's checks and messages."""
    known = loggers()
    changes: dict[str, int | None] = {}
    for c in configs:
        if c.name not in known:
            raise KafkaCoreError(errors.INVALID_CONFIG, f"Logger {c.name} does not exist!")
        if c.config_operation == SET:
            if c.value not in VALID_LEVELS:
                raise KafkaCoreError(
                    errors.INVALID_CONFIG,
                    f"Cannot set the log level of {c.name} to {c.value} as it is not a "
                    f"supported log level. Valid log levels are {', '.join(VALID_LEVELS)}")
            changes[c.name] = _TO_PYTHON[c.value]
        elif c.config_operation == DELETE:
            if c.name == ROOT:
                raise KafkaCoreError(INVALID_REQUEST,
                                     "Removing the log level of the root logger is not allowed")
            changes[c.name] = None
        else:
            op = "APPEND" if c.config_operation == 2 else "SUBTRACT"
            raise KafkaCoreError(INVALID_REQUEST,
                                 f"{op} operation is not allowed for the BROKER_LOGGER resource")
    if validate_only:
        return
    for name, level in changes.items():
        _logger(name).setLevel(logging.NOTSET if level is None else level)
