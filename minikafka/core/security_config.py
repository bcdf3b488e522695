"""A broker's listeners and their security, read from Kafka's own server.properties keys.

    listeners=SASL_PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093
    listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT
    sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256
    listener.name.sasl_plaintext.plain.sasl.jaas.config=\\
        org.apache.kafka.common.security.plain.PlainLoginModule required \\
        username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";
    ssl.keystore.type=PEM
    ssl.keystore.location=/path/broker.pem        # private key and certificate chain

`client_listeners(raw)` gives the listeners clients connect to (not the controller's),
each with its security protocol, SASL mechanisms and PLAIN users, and its ssl.* settings
(a `listener.name.<name>.ssl.*` key wins over the plain one, as in Kafka).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "PROTOCOLS",
    "SECURITY_KEYS",
    "JaasEntry",
    "ListenerConfig",
    "client_listeners",
    "is_security_key",
    "parse_jaas",
    "parse_listeners",
]

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
DEFAULT_PROTOCOL_MAP = {p: p for p in PROTOCOLS}
# The mechanisms minikafka's brokers speak (Kafka also has GSSAPI; OAUTHBEARER here is
# Kafka's default, unsecured-JWT validation).
SUPPORTED_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")

# The broker keys minikafka reads for security (the rest of Kafka's ssl.*/sasl.* keys
# are accepted and ignored). listener.name.* keys are security keys too.
SECURITY_KEYS = frozenset({
    "authorizer.class.name", "super.users", "allow.everyone.if.no.acl.found",
    "listener.security.protocol.map", "sasl.enabled.mechanisms", "ssl.client.auth",
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.key.password",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
    "ssl.truststore.certificates", "ssl.enabled.protocols", "ssl.cipher.suites",
    "ssl.principal.mapping.rules",
})


def is_security_key(key: str) -> bool:
    return key in SECURITY_KEYS or key.startswith("listener.name.")


@dataclass(frozen=True)
class JaasEntry:
    """One login module of a sasl.jaas.config value."""

    module: str
    flag: str
    options: dict[str, str]


_JAAS_TOKEN = re.compile(r'\s*(?:([\w.$-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))|([\w.$-]+)|(;))')


def parse_jaas(text: str) -> list[JaasEntry]:
    """`Module flag key="value" ...;` entries, as Kafka's JaasConfig parses them."""
    entries: list[JaasEntry] = []
    words: list[str] = []
    options: dict[str, str] = {}
    pos, text = 0, text.strip()
    while pos < len(text):
        m = _JAAS_TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"Invalid JAAS config: {text[pos:pos + 40]!r}")
        pos = m.end()
        key, quoted, bare, word, end = m.groups()
        if key is not None:
            options[key] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
        elif word is not None:
            if options:
                raise ValueError(f"Invalid JAAS config: {word!r} after options")
            words.append(word)
        elif end is not None:
            if len(words) != 2:
                raise ValueError("Invalid JAAS config: expected 'LoginModule flag options;'")
            entries.append(JaasEntry(words[0], words[1], options))
            words, options = [], {}
        while pos < len(text) and text[pos].isspace():
            pos += 1
    if words or options:
        raise ValueError("Invalid JAAS config: a login module must end with ';'")
    if not entries:
        raise ValueError("Invalid JAAS config: no login module")
    return entries


def parse_listeners(value: str) -> list[tuple[str, str, int]]:
    """`NAME://host:port,...` as (NAME upper-cased, host, port)."""
    out = []
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, address = item.partition("://")
        host, _, port = address.rpartition(":")
        if not sep or not port.isdigit():
            raise ValueError(value)
        out.append((name.upper(), host.strip("[]"), int(port)))
    return out


@dataclass
class ListenerConfig:
    """A listener clients use, with what securing it takes."""

    name: str
    host: str
    port: int
    protocol: str = "PLAINTEXT"
    mechanisms: tuple[str, ...] = ()
    plain_users: dict[str, str] = field(default_factory=dict)  # PLAIN: user -> password
    # OAUTHBEARER: the JAAS options (unsecuredValidatorPrincipalClaimName, ...RequiredScope)
    oauthbearer_options: dict[str, str] = field(default_factory=dict)
    ssl: dict[str, str] = field(default_factory=dict)  # ssl.* settings, listener's first

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")


def _protocol_map(raw: Mapping[str, str]) -> dict[str, str]:
    text = raw.get("listener.security.protocol.map")
    if not text:
        return dict(DEFAULT_PROTOCOL_MAP)
    out = {}
    for item in text.split(","):
        name, sep, protocol = item.strip().partition(":")
        if not sep or protocol.strip().upper() not in PROTOCOLS:
            raise ValueError(f"Invalid value {text} for configuration "
                             "listener.security.protocol.map")
        out[name.strip().upper()] = protocol.strip().upper()
    return out


def _listener_key(raw: Mapping[str, str], listener: str, key: str) -> str | None:
    """Kafka's listener override: listener.name.<listener lower>.<key> over <key>."""
    return raw.get(f"listener.name.{listener.lower()}.{key}", raw.get(key))


def listener_config(raw: Mapping[str, str], name: str, host: str, port: int) -> ListenerConfig:
    """The security of listener `name` (upper case) as `raw` (the properties) sets it;
    ValueError with Kafka's words for what it would refuse too."""
    protocols = _protocol_map(raw)
    protocol = protocols.get(name)
    if protocol is None:
        raise ValueError(f"No security protocol defined for listener {name}")
    config = ListenerConfig(name, host, port, protocol)
    if config.sasl:
        text = _listener_key(raw, name, "sasl.enabled.mechanisms") or "GSSAPI"
        mechanisms = tuple(m.strip().upper() for m in text.split(",") if m.strip())
        unsupported = [m for m in mechanisms if m not in SUPPORTED_MECHANISMS]
        if unsupported:
            raise ValueError(f"SASL mechanism(s) {', '.join(unsupported)} are not supported by "
                             f"minikafka (it has {', '.join(SUPPORTED_MECHANISMS)}); set "
                             "sasl.enabled.mechanisms")
        config.mechanisms = mechanisms
        for mechanism in mechanisms:
            key = f"listener.name.{name.lower()}.{mechanism.lower()}.sasl.jaas.config"
            jaas = raw.get(key)
            if jaas is None:
                raise ValueError(f"Could not find a '{key}' entry in the JAAS configuration "
                                 "(minikafka reads JAAS from listener.name.* keys only)")
            entries = parse_jaas(jaas)
            if mechanism == "PLAIN":
                for entry in entries:
                    config.plain_users.update({k[5:]: v for k, v in entry.options.items()
                                               if k.startswith("user_")})
            elif mechanism == "OAUTHBEARER":
                if raw.get(f"listener.name.{name.lower()}.oauthbearer.sasl.server.callback."
                           "handler.class"):
                    raise ValueError("minikafka validates OAUTHBEARER tokens as Kafka's default "
                                     "(unsecured JWT) handler only; remove "
                                     "sasl.server.callback.handler.class")
                for entry in entries:
                    config.oauthbearer_options.update(entry.options)
    if config.tls:
        prefix = f"listener.name.{name.lower()}."
        config.ssl = {k: v for k, v in raw.items() if k.startswith("ssl.")}
        config.ssl.update({k[len(prefix):]: v for k, v in raw.items()
                           if k.startswith(prefix + "ssl.")})
        if protocol == "SASL_SSL" and prefix + "ssl.client.auth" not in raw:
            # Kafka's ChannelBuilders (KIP-684): a SASL_SSL listener asks for client
            # certificates only when ssl.client.auth is listener-prefixed; the broker-wide
            # value is for SSL listeners (Kafka logs a warning and ignores it there).
            config.ssl["ssl.client.auth"] = "none"
    return config


def client_listeners(raw: Mapping[str, str]) -> list[ListenerConfig]:
    """The listeners clients use, in the file's order: not controller listeners
    (controller.listener.names). PLAINTEXT://:9092 when `listeners` is unset."""
    controller = {n.strip().upper() for n in
                  raw.get("controller.listener.names", "CONTROLLER").split(",")}
    found = [listener_config(raw, name, host, port)
             for name, host, port in parse_listeners(raw.get("listeners") or "PLAINTEXT://:9092")
             if name not in controller]
    return found


def parse_scram_argument(text: str) -> tuple[str, str, str, int]:
    """kafka-storage.sh format --add-scram's argument,
    'SCRAM-SHA-256=[name=alice,password=alice-secret]' (iterations=N optional), as
    (user, mechanism, password, iterations)."""
    from .scram import DEFAULT_ITERATIONS, MECHANISMS
    mechanism, sep, rest = text.partition("=")
    mechanism = mechanism.strip().upper()
    if not sep or mechanism not in MECHANISMS or not rest.startswith("[") \
            or not rest.endswith("]"):
        raise ValueError(f"bad --add-scram {text!r}: expected "
                         "'SCRAM-SHA-256=[name=alice,password=alice-secret]'")
    fields = {}
    for item in rest[1:-1].split(","):
        key, _, value = item.partition("=")
        fields[key.strip()] = value.strip().strip('"')
    if not fields.get("name") or not fields.get("password"):
        raise ValueError(f"bad --add-scram {text!r}: it needs name= and password=")
    return fields["name"], mechanism, fields["password"], \
        int(fields.get("iterations", DEFAULT_ITERATIONS))
