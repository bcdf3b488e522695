"""A schema registry in miniature, with real Avro (fastavro) on the wire.

Kafka stores bytes; producers and consumers must agree on what they mean. A schema
registry (Confluent's is the common one; Apicurio and Karapace speak the same API) keeps
every schema a topic's records were written with, numbered by a global id, and checks
each new version of a subject's schema against the old ones before accepting it.

The record format its serializers use (the "wire format"):

    byte 0      magic byte, 0
    bytes 1-4   the schema id, a big-endian 32-bit int
    bytes 5-    the Avro binary encoding of the value (no schema in it)

so a consumer reads the id, fetches that schema once (and caches it), and decodes the
payload with it, resolving it to the schema it wants to read with (its *reader* schema).

Subjects follow the default TopicNameStrategy: `<topic>-value` and `<topic>-key`.
Compatibility is set per subject (BACKWARD by default, as in Confluent's registry):

    BACKWARD  consumers using the new schema can read data written with the previous one
    FORWARD   consumers using the previous schema can read data written with the new one
    FULL      both
    (the *_TRANSITIVE forms check every earlier version, not only the previous one; NONE
    checks nothing)

`problems(reader, writer)` applies Avro's schema resolution rules (the Avro
specification's "Schema Resolution") to say why a reader cannot read a writer's data;
the tests check it against fastavro's own resolution.
"""

from __future__ import annotations

import io
import json
import struct
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

__all__ = ["COMPATIBILITY_LEVELS", "IncompatibleSchemaError", "SchemaRegistry", "deserialize",
           "problems", "serialize", "subject_for"]

MAGIC_BYTE = 0


def _fastavro() -> ModuleType:
    """fastavro, imported at first use: a C extension with no build for the browser edition,
    where the lesson's other cells must still import this module."""
    import fastavro

    return fastavro

COMPATIBILITY_LEVELS = ("BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE",
                        "FULL", "FULL_TRANSITIVE", "NONE")
# Avro's promotions: a writer's type (key) that a reader of each value type can read.
PROMOTIONS = {"int": {"long", "float", "double"}, "long": {"float", "double"},
              "float": {"double"}, "string": {"bytes"}, "bytes": {"string"}}


class IncompatibleSchemaError(Exception):
    """The registry's HTTP 409: the new schema breaks the subject's compatibility rule."""


def _type(schema: Any) -> str:
    if isinstance(schema, list):
        return "union"
    if isinstance(schema, dict):
        return schema["type"]
    return schema


def problems(reader: Any, writer: Any, path: str = "") -> list[str]:
    """Why data written with `writer` cannot be read with `reader` (empty: it can).
    Both are parsed Avro schemas (fastavro.parse_schema)."""
    where = path or "the value"
    rt, wt = _type(reader), _type(writer)
    if wt == "union":  # every branch the writer may have used must be readable
        return [p for branch in writer for p in problems(reader, branch, path)]
    if rt == "union":
        if any(not problems(branch, writer, path) for branch in reader):
            return []
        return [f"{where}: the writer's {wt} matches no branch of the reader's union"]
    if rt != wt:
        if rt in PROMOTIONS.get(wt, ()):
            return []
        return [f"{where}: the writer's {wt} cannot be read as {rt}"]
    if rt == "record":
        out = []
        written = {f["name"]: f for f in writer["fields"]}
        for f in reader["fields"]:
            name = f"{path}.{f['name']}" if path else f["name"]
            source = written.get(f["name"]) or next(
                (written[a] for a in f.get("aliases", ()) if a in written), None)
            if source is not None:
                out += problems(f["type"], source["type"], name)
            elif "default" not in f:
                out.append(f"field {name!r} is new and has no default: data written without "
                           "it cannot be read")
        return out
    if rt == "enum":
        missing = sorted(set(writer["symbols"]) - set(reader["symbols"]))
        if missing and "default" not in reader:
            return [f"{where}: the reader's enum lacks {missing}"]
        return []
    if rt == "array":
        return problems(reader["items"], writer["items"], f"{where}[]")
    if rt == "map":
        return problems(reader["values"], writer["values"], f"{where}{{}}")
    if rt == "fixed" and reader["size"] != writer["size"]:
        return [f"{where}: fixed size {writer['size']} cannot be read as {reader['size']}"]
    return []


@dataclass
class _Subject:
    compatibility: str = "BACKWARD"
    versions: list[int] = field(default_factory=list)  # schema ids, version 1 first


class SchemaRegistry:
    """Subjects, versions and global schema ids, with compatibility checks on register."""

    def __init__(self, default_compatibility: str = "BACKWARD") -> None:
        self.default_compatibility = default_compatibility
        self._schemas: dict[int, Any] = {}  # id -> parsed schema
        self._ids: dict[str, int] = {}  # canonical text -> id (one id per distinct schema)
        self._subjects: dict[str, _Subject] = {}

    def set_compatibility(self, subject: str, level: str) -> None:
        if level not in COMPATIBILITY_LEVELS:
            raise ValueError(f"compatibility is one of {COMPATIBILITY_LEVELS}")
        self._subjects.setdefault(subject, _Subject(self.default_compatibility)).compatibility = level

    def compatibility(self, subject: str) -> str:
        return self._subjects.get(subject, _Subject(self.default_compatibility)).compatibility

    def versions(self, subject: str) -> list[int]:
        """The subject's schema ids, version 1 first."""
        return list(self._subjects.get(subject, _Subject()).versions)

    def schema(self, schema_id: int) -> Any:
        return self._schemas[schema_id]

    def check(self, subject: str, schema: Any) -> list[str]:
        """What registering `schema` under `subject` would break (empty: it is allowed)."""
        new = _fastavro().parse_schema(schema)
        level = self.compatibility(subject)
        if level == "NONE":
            return []
        ids = self.versions(subject)
        olds = ids if level.endswith("_TRANSITIVE") else ids[-1:]
        out = []
        for schema_id in olds:
            old = self._schemas[schema_id]
            version = ids.index(schema_id) + 1
            if level.startswith(("BACKWARD", "FULL")):
                out += [f"new schema reading version {version}: {p}" for p in problems(new, old)]
            if level.startswith(("FORWARD", "FULL")):
                out += [f"version {version} reading the new schema: {p}"
                        for p in problems(old, new)]
        return out

    def register(self, subject: str, schema: Any) -> int:
        """The schema's id; a new version if it is new to the subject and compatible,
        else IncompatibleSchemaError."""
        parsed = _fastavro().parse_schema(schema)
        text = json.dumps(parsed, sort_keys=True)
        entry = self._subjects.setdefault(subject, _Subject(self.default_compatibility))
        known = self._ids.get(text)
        if known is not None and known in entry.versions:
            return known
        found = self.check(subject, schema)
        if found:
            raise IncompatibleSchemaError(
                f"Schema being registered is incompatible with an earlier schema for subject "
                f"{subject!r} ({entry.compatibility}): " + "; ".join(found))
        if known is None:
            known = self._ids[text] = len(self._schemas) + 1
            self._schemas[known] = parsed
        entry.versions.append(known)
        return known


def subject_for(topic: str, is_key: bool = False) -> str:
    """TopicNameStrategy, the serializers' default."""
    return f"{topic}-{'key' if is_key else 'value'}"


def serialize(registry: SchemaRegistry, topic: str, schema: Any, value: Any) -> bytes:
    """What an Avro serializer puts in a record's value: register (or look up) the schema
    under `<topic>-value`, then magic byte, schema id and the Avro binary payload."""
    schema_id = registry.register(subject_for(topic), schema)
    out = io.BytesIO()
    out.write(struct.pack(">bI", MAGIC_BYTE, schema_id))
    _fastavro().schemaless_writer(out, registry.schema(schema_id), value)
    return out.getvalue()


def deserialize(registry: SchemaRegistry, data: bytes, reader_schema: Any = None) -> Any:
    """Decode a value in the wire format with the schema its id names, resolved to
    `reader_schema` (the consumer's own version) when one is given."""
    magic, schema_id = struct.unpack(">bI", data[:5])
    if magic != MAGIC_BYTE:
        raise ValueError(f"unknown magic byte {magic}: not the schema registry's format")
    reader = None if reader_schema is None else _fastavro().parse_schema(reader_schema)
    return _fastavro().schemaless_reader(io.BytesIO(data[5:]), registry.schema(schema_id), reader)
