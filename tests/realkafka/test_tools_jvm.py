"""The warm JVM the tool tests share (jvm.tools_jvm, tests/java/ToolServer.java) answers as a
fresh JVM does: the same exit code, stdout and stderr; a hung call is killed and reported with
what it printed; the JVM ends with its block."""
from __future__ import annotations

import os

import pytest

from . import jvm

pytestmark = [pytest.mark.real_kafka, pytest.mark.slow, pytest.mark.timeout(300)]

TOOLS = "org.apache.kafka.tools."
UNREACHABLE = "127.0.0.1:1"  # nothing listens on port 1: a client there retries forever


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def warm(monkeypatch):
    monkeypatch.delenv("MINIKAFKA_FRESH_JVM", raising=False)
    with jvm.tools_jvm() as server:
        yield server


@pytest.mark.parametrize("args", [
    # Exit.exit(1) after argparse's usage error, on stderr.
    ("TopicCommand", "--bootstrap-server", UNREACHABLE, "--create"),
    # Exit.exit(0) inside a try whose catch would print "null" and a stack trace.
    ("TopicCommand", "--version"),
    # Exit.exit(1) from jopt-simple's option check, its usage text on stdout.
    ("consumer.ConsoleConsumer", "--bootstrap-server", UNREACHABLE),
    # Stack traces down to main, a cause's "... 2 more" and "... 3 more" counting main's
    # frames: none of the warm JVM's frames below main shows.
    ("reassign.ReassignPartitionsCommand", "--bootstrap-server", UNREACHABLE,
     "--reassignment-json-file", "/nonexistent", "--verify"),
    ("DeleteRecordsCommand", "--bootstrap-server", UNREACHABLE, "--offset-json-file",
     "/nonexistent"),
])
def test_a_tool_prints_and_exits_as_in_a_fresh_jvm(warm, args):
    name, *rest = args
    fresh = jvm.subprocess.run([jvm.java(), *jvm.JVM_OPTS, "-cp", jvm.kafka_classpath(),
                                TOOLS + name, *rest], capture_output=True, text=True, timeout=120)
    warmed = jvm.run_java(TOOLS + name, *rest)
    assert warm.process is not None  # it did run warm
    assert (warmed.returncode, warmed.stdout, warmed.stderr) == \
        (fresh.returncode, fresh.stdout, fresh.stderr)
    assert fresh.stdout + fresh.stderr  # each prints something to compare


def test_stdin_reaches_the_tool_and_log4j_prints_into_its_call(warm):
    # ConsoleProducer reads a record from stdin; with nothing listening, its send fails after
    # max.block.ms and Log4j's default configuration prints the ERROR on the call's stdout.
    args = ("--bootstrap-server", UNREACHABLE, "--topic", "t", "--producer-property",
            "max.block.ms=500")
    done = jvm.run_java(TOOLS + "ConsoleProducer", *args, input="a record\n")
    assert done.returncode == 0
    assert ("ERROR Error when sending message to topic t with key: null, value: 8 bytes"
            in done.stdout)
    nothing = jvm.run_java(TOOLS + "ConsoleProducer", *args, input="")
    assert nothing.returncode == 0 and "ERROR" not in nothing.stdout
    missing = jvm.run_java(TOOLS + "NoSuchCommand")
    assert (missing.returncode, missing.stdout) == (1, "")
    assert "Could not find or load main class org.apache.kafka.tools.NoSuchCommand" in \
        missing.stderr


def test_a_hung_call_is_killed_with_its_output_and_the_next_call_gets_a_new_jvm(warm):
    jvm.run_java(TOOLS + "TopicCommand", "--version")
    first = warm.process.pid
    with pytest.raises(jvm.ToolTimeout) as hung:
        jvm.run_java(TOOLS + "consumer.ConsoleConsumer", "--bootstrap-server", UNREACHABLE,
                     "--topic", "t", timeout=8)
    # what the consumer printed before it hung is in the failure
    assert "The consumer rebalance protocol (KIP-848)" in str(hung.value)
    assert warm.process is None and not alive(first)
    again = jvm.run_java(TOOLS + "TopicCommand", "--version")
    assert again.returncode == 0 and warm.process.pid != first


def test_the_jvm_ends_with_its_block(monkeypatch):
    monkeypatch.delenv("MINIKAFKA_FRESH_JVM", raising=False)
    with jvm.tools_jvm() as server:
        assert jvm.run_java(TOOLS + "TopicCommand", "--version").returncode == 0
        pid = server.process.pid
    assert not alive(pid)
    assert jvm._warm is None


def test_a_tool_that_calls_system_exit_keeps_a_jvm_of_its_own(warm):
    # VerifiableProducer ends with System.exit, which would end the warm JVM with it.
    done = jvm.run_java(TOOLS + "VerifiableProducer", "--bootstrap-server", UNREACHABLE)
    assert done.returncode != 0 and "--topic" in done.stdout + done.stderr
    assert warm.process is None  # the warm JVM was not started for it
