"""Kafka's own config definitions, dumped from its jars into minikafka/core/kafka_configdefs.json.

    minikafka kafka configdefs          # rewrite the JSON from the fetched jars
    minikafka kafka configdefs --check  # exit 1 if the JSON differs from the jars

ConfigDefs.java (beside this file) runs against the jars `minikafka kafka fetch` put in the
cache and prints every topic (LogConfig), broker (KafkaConfig) and group (GroupConfig) key
with its type, default, validator, importance, dynamic update mode and synonyms, and the
features a new cluster finalizes. core.kafka_configs reads the JSON.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from .. import core
from .jars import kafka_libs

__all__ = ["DATA", "SOURCE", "dump", "write"]

SOURCE = Path(__file__).with_name("ConfigDefs.java")
DATA = Path(core.__file__).with_name("kafka_configdefs.json")


def dump(libs: Path | None = None) -> str:
    """The JSON text Kafka's jars give (Java 11+ runs the single-file source directly)."""
    from ..doctor import find_java

    libs = libs or kafka_libs()
    if not any(libs.glob("kafka-clients-*.jar")):
        raise FileNotFoundError(f"no Kafka jars in {libs}: run `minikafka kafka fetch` first")
    java = find_java()
    if java is None:
        raise FileNotFoundError("Java 17 or newer is needed (./setup.sh installs it)")
    done = subprocess.run([java, "-cp", f"{libs}/*", str(SOURCE)], capture_output=True,
                          text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"ConfigDefs.java failed: {done.stderr.strip()[-2000:]}")
    return done.stdout


def write(check: bool = False) -> bool:
    """Write DATA from the jars (check: only compare). True when DATA already matched."""
    text = dump()
    same = DATA.exists() and DATA.read_text() == text
    if not check and not same:
        DATA.write_text(text)
    return same
