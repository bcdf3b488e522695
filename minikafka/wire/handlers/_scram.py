"""Kafka's ScramMechanism codes on the wire (AlterUserScramCredentials,
DescribeUserScramCredentials): 0 UNKNOWN, 1 SCRAM-SHA-256, 2 SCRAM-SHA-512."""
from __future__ import annotations

from ...core.scram import MECHANISMS

BY_CODE = {code: name for name, (_, code, _) in MECHANISMS.items()}
CODE = {name: code for code, name in BY_CODE.items()}
