"""Lesson 19's helpers: what a SASL login puts on the wire, and a cluster's ACLs as
kafka-acls lists them.

`sasl_exchange` runs one login with kafka-python's own SASL mechanism classes (the bytes
its client sends) against minikafka's broker side (minikafka.core.scram, the bytes a
broker answers), so the lesson shows the real messages, not a description of them.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kafka.net.sasl.plain import SaslMechanismPlain
from kafka.net.sasl.scram import SaslMechanismScram

from ..core.acl import AclOperation, Authorizer, ResourceType
from ..core.scram import ScramServer
from .browser import BROWSER, require
from .tables import Table

if TYPE_CHECKING:
    from ..cluster import Cluster

__all__ = ["SASL_BROKER_FILE", "Served", "acl_table", "ask", "sasl_exchange", "serve_properties"]

# The course's broker file with SASL and ACLs, for minikafka serve and Kafka alike (in the
# repository's docs/, beside docs/cli.md which explains it). The browser edition's site
# carries it beside the lessons (minikafka lite build), where the kernel starts.
SASL_BROKER_FILE = (Path("docs") if BROWSER else Path(__file__).resolve().parents[2] / "docs") \
    / "server-sasl.properties"


def _shown(message: bytes) -> str:
    return repr(message)[2:-1] if message else "(empty: the login succeeded)"


def sasl_exchange(cluster: Cluster, mechanism: str, user: str, password: str) -> Table:
    """The SaslAuthenticate messages of one login, in order: who sent each and its bytes.

    PLAIN is one message holding the password itself; SCRAM is two round trips in which
    the password never travels, only a proof computed from it. The broker side checks the
    user's SCRAM credential in `cluster` (made with cluster.set_scram_credential); nonces
    are fixed so the table is the same on every run."""
    config = {"security_protocol": "SASL_SSL", "sasl_mechanism": mechanism,
              "sasl_plain_username": user, "sasl_plain_password": password}
    rows = []
    if mechanism == "PLAIN":
        client = SaslMechanismPlain(**config)
        rows.append({"from": "client", "message": _shown(client.auth_bytes())})
        rows.append({"from": "broker", "message": _shown(b"")})
        return Table(rows, title=f"SASL/{mechanism} login of {user}")
    client = SaslMechanismScram(**config)
    client._scram_client.nonce = b"clientnonce0019"  # kafka-python draws a random one
    credentials = cluster.controller.scram_credentials
    server = ScramServer(mechanism, lambda name: credentials.get((name, mechanism)),
                         nonce="brokernonce0019")
    while not client.is_done():
        sent = client.auth_bytes()
        rows.append({"from": "client", "message": _shown(sent)})
        answer = server.evaluate(sent)
        rows.append({"from": "broker", "message": _shown(answer)})
        client.receive(answer)
    return Table(rows, title=f"SASL/{mechanism} login of {user}")


def ask(authorizer: Authorizer, principal: str, operation: str, resource_type: str,
        name: str, host: str = "127.0.0.1") -> str:
    """The authorizer's answer in one sentence, with the rule and the ACL that decided:
    "User:alice may READ topic orders-eu: an ALLOW matched: (principal=...) on ..."."""
    d = authorizer.decide(principal, host, AclOperation[operation.upper()],
                          ResourceType[resource_type.upper()], name)
    verb = "may" if d.allowed else "may not"
    why = d.rule + (f": {d.acl}" if d.acl is not None else "")
    return f"{principal} {verb} {operation.upper()} {resource_type.lower()} {name} ({why})"


def acl_table(cluster: Cluster) -> Table:
    """Every ACL in the cluster's metadata, one row each, as kafka-acls --list groups
    them: resource pattern, then principal, host, operation and permission."""
    rows = [{"resource": f"{a.resource_type.name}:{a.pattern_type.name}:{a.resource_name}",
             "principal": a.principal, "host": a.host, "operation": a.operation.name,
             "permission": a.permission_type.name}
            for a in sorted(cluster.controller.acls,
                            key=lambda a: (a.resource_type, a.resource_name, a.principal,
                                           a.operation))]
    return Table(rows, columns=["resource", "principal", "host", "operation", "permission"],
                 title=f"{len(rows)} ACLs")


@dataclass
class Served:
    """A `minikafka serve` process: its bootstrap servers and what it printed on start."""

    bootstrap_servers: str = ""
    lines: list[str] = field(default_factory=list)


@contextmanager
def serve_properties(path: str | Path, *flags: str, timeout_s: float = 60) -> Iterator[Served]:
    """Run `minikafka serve PATH --port 0 FLAGS...` (a broker file, as a student runs it,
    on free ports) until the block ends; yields its bootstrap servers and start lines."""
    require("`minikafka serve` run as a process")
    # The console script `minikafka`, run by this interpreter (so in this environment).
    command = [sys.executable, "-c", "import sys; from minikafka.cli import main; "
               "sys.exit(main(sys.argv[1:]))", "serve", str(path), "--port", "0", *flags]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    served = Served()
    try:
        for line in proc.stdout:
            served.lines.append(line.rstrip())
            if line.startswith("bootstrap servers:"):
                served.bootstrap_servers = line.split()[2]
                break
        if not served.bootstrap_servers:
            raise RuntimeError(f"minikafka serve {path} did not start (exit code "
                               f"{proc.wait(timeout_s)}): {proc.stderr.read().strip()}")
        yield served
    finally:
        proc.terminate()
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
