"""Lesson 22's helpers: a certificate authority of the lesson's own, listeners secured
with it, and a quota's throttle over time.

    certs = make_certificates(workdir, clients=["alice", "bob"])
    certs.ca                 # the CA certificate: clients' ssl_cafile, brokers' truststore
    certs.broker             # the broker's key and certificate in one PEM (a PEM keystore)
    certs.client["alice"]    # (certificate, key) of CN=alice,OU=course,O=minikafka

Certificates are made with the `cryptography` package (minikafka's [tls] extra): EC
P-256 keys, valid for localhost and 127.0.0.1, signed by the lesson's CA. The browser
edition has no build of it (a C library) nor of `ssl`, so they are imported where used, and
there make_certificates names the subjects and files without making them.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka.net.sasl.scram import SaslMechanismScram, ScramClient

from ..core.api.client_quotas import USER
from ..extras import require
from .browser import BROWSER, say_skipped

if TYPE_CHECKING:
    from ..cluster import Cluster

__all__ = ["Certificates", "DelegationToken", "create_delegation_token", "listener_properties",
           "make_certificates", "oauthbearer_produce", "served_throttle", "throttle_over_time",
           "tls_handshake", "token_produce"]

ORGANIZATION = "minikafka"


@dataclass(frozen=True)
class Certificates:
    """Where make_certificates wrote the CA, the broker's keystore and each client's pair."""

    directory: Path
    ca: Path
    broker: Path
    client: dict[str, tuple[Path, Path]] = field(default_factory=dict)
    subjects: dict[str, str] = field(default_factory=dict)  # name -> its subject's DN


def make_certificates(directory: str | Path, clients: dict[str, str] | list[str] = (),
                      ) -> Certificates:
    """A CA, a broker certificate (CN=localhost) and one client certificate per name, in
    DIRECTORY. CLIENTS is a list of names (OU=course) or {name: organizational unit}.
    In the browser edition the files are not made (a cell that would use them is skipped):
    it says so in one line and returns the subjects and where the files would be."""
    out = Path(directory)
    units = dict(clients) if isinstance(clients, dict) else dict.fromkeys(clients, "course")
    pairs = {client: (out / f"{client}.pem", out / f"{client}.key") for client in units}
    subjects = {"broker": f"CN=localhost,OU=brokers,O={ORGANIZATION}",
                **{client: f"CN={client},OU={unit},O={ORGANIZATION}" for client, unit in units.items()}}
    certs = Certificates(out, out / "ca.pem", out / "broker.pem", pairs, subjects)
    if BROWSER:
        say_skipped("making the keys and certificates, which needs cryptography (a C library "
                    "with no build for the browser); it runs after ./setup.sh. Their subjects:")
        return certs
    require("tls", what="Lesson 22's certificates")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    out.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    until = now + datetime.timedelta(days=3650)

    def name(cn: str, unit: str | None) -> x509.Name:
        # Written O, OU, CN: Java prints the subject the other way round, CN first.
        parts = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION)]
        if unit:
            parts.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, unit))
        parts.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
        return x509.Name(parts)

    def pem_key(key: Any) -> bytes:
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name("minikafka course CA", None)
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(1).not_valid_before(now)
          .not_valid_after(until)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    certs.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))

    def issue(subject: x509.Name, serial: int, server: bool) -> tuple[bytes, bytes]:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name)
                   .public_key(key.public_key()).serial_number(serial).not_valid_before(now)
                   .not_valid_after(until)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None),
                                  critical=True))
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False).add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        else:
            builder = builder.add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        cert = builder.sign(ca_key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.PEM), pem_key(key)

    cert, key = issue(name("localhost", "brokers"), 2, server=True)
    certs.broker.write_bytes(key + cert)  # ssl.keystore.type=PEM: the key, then the chain
    for serial, (client, unit) in enumerate(units.items(), start=3):
        cert, key = issue(name(client, unit), serial, server=False)
        pairs[client][0].write_bytes(cert)
        pairs[client][1].write_bytes(key)
    return certs


def listener_properties(certs: Certificates, protocol: str = "SSL", *,
                        client_auth: str = "none", mapping_rules: str | None = None,
                        mechanisms: tuple[str, ...] = ()) -> dict[str, str]:
    """A broker's server.properties for one listener on a free port, secured with CERTS:
    SSL or SASL_SSL, ssl.client.auth, ssl.principal.mapping.rules and SASL mechanisms
    (SCRAM users come from the cluster's metadata)."""
    properties = {"listeners": f"{protocol}://127.0.0.1:0",
                  "ssl.keystore.type": "PEM", "ssl.keystore.location": str(certs.broker),
                  "ssl.truststore.type": "PEM", "ssl.truststore.location": str(certs.ca)}
    # On SASL_SSL Kafka reads ssl.client.auth only with the listener's prefix (KIP-684).
    auth_key = "ssl.client.auth" if protocol == "SSL" else f"listener.name.{protocol.lower()}.ssl.client.auth"
    properties[auth_key] = client_auth
    if mapping_rules is not None:
        properties["ssl.principal.mapping.rules"] = mapping_rules
    if mechanisms:
        properties["sasl.enabled.mechanisms"] = ",".join(mechanisms)
        for mechanism in mechanisms:
            properties[f"listener.name.{protocol.lower()}.{mechanism.lower()}.sasl.jaas.config"] = (
                JAAS_MODULES[mechanism] + " required;")
    return properties


JAAS_MODULES = {
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "OAUTHBEARER": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
}


def _silent_logger(name: str) -> Any:
    """A logger that prints nothing, for librdkafka's retry lines: a lesson shows the
    outcome, not every reconnection."""
    import logging

    logger = logging.getLogger(name)
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
        logger.propagate = False
    return logger


# Kafka closes a connection whose login failed after connection.failed.authentication.delay.ms
# (100 ms), and serve logs a warning then: wait for it while the broker's log is muted.
_CLOSE_AFTER_FAILED_LOGIN_S = 0.3


def oauthbearer_produce(bootstrap: str, config: str, *, ca: str | Path | None = None,
                        topic: str = "orders", timeout_s: float = 5.0) -> str:
    """One record from a confluent-kafka producer logging in with SASL/OAUTHBEARER and
    librdkafka's built-in unsecured JWT (enable.sasl.oauthbearer.unsecure.jwt), CONFIG its
    sasl.oauthbearer.config ("principal=alice"); over SASL_SSL trusting CA when given.
    Returns "wrote offset N", the error the broker refused the login with, or the
    producer's error."""
    import logging
    import time

    try:
        from confluent_kafka import Producer
    except ImportError as missing:  # confluent-kafka comes with the [test] extra only
        raise ModuleNotFoundError(
            "An OAUTHBEARER login with librdkafka's unsecured JWT needs confluent-kafka: "
            "pip install confluent-kafka", name="confluent_kafka") from missing

    errors: list[Any] = []
    delivered: list[str] = []
    settings = {"bootstrap.servers": bootstrap, "sasl.mechanism": "OAUTHBEARER",
                "security.protocol": "SASL_SSL" if ca is not None else "SASL_PLAINTEXT",
                "enable.sasl.oauthbearer.unsecure.jwt": True, "sasl.oauthbearer.config": config,
                "error_cb": errors.append, "logger": _silent_logger("minikafka.course.rdkafka"),
                "message.timeout.ms": int(timeout_s * 1000)}
    if ca is not None:
        settings["ssl.ca.location"] = str(ca)
    broker_log = logging.getLogger("minikafka.wire")
    level = broker_log.level
    broker_log.setLevel(logging.ERROR)
    producer = Producer(settings)
    try:
        producer.produce(topic, b"token", on_delivery=lambda err, msg: delivered.append(
            f"wrote offset {msg.offset()}" if err is None else err.name()))
        deadline = time.monotonic() + timeout_s
        while not delivered and not errors and time.monotonic() < deadline:
            producer.poll(0.05)
        outcome = delivered[:1]  # before purge() reports the record it drops
        producer.purge()
        producer.flush(0)
        if not outcome:
            time.sleep(_CLOSE_AFTER_FAILED_LOGIN_S)
    finally:
        broker_log.setLevel(level)
    if outcome:
        return outcome[0]
    if errors:
        text = errors[0].str()
        marker = "SASL authentication error: "
        return text[text.find(marker) + len(marker):].split(" (after")[0] if marker in text else text
    return "no answer"


@dataclass(frozen=True)
class DelegationToken:
    """What CreateDelegationToken answered (kafka-delegation-tokens.sh --create prints it)."""

    error: str
    owner: str
    token_id: str
    hmac: bytes
    lifetime_h: float   # issue to max
    expires_in_h: float  # issue to expiry

    @property
    def password(self) -> str:
        """The SCRAM password a worker logs in with: the HMAC in base64."""
        import base64
        return base64.b64encode(self.hmac).decode()


def send_request(admin: Any, request: Any) -> Any:
    """One request through a kafka-python admin client's connection manager, for the APIs
    its admin has no method for (delegation tokens, client quotas)."""
    async def send() -> Any:
        return await admin._manager.send(request)
    return admin._manager.run(send)


def create_delegation_token(bootstrap: str, *, user: str, password: str, ca: str | Path,
                            renewers: tuple[str, ...] = ()) -> DelegationToken:
    """CreateDelegationToken from USER, logged in with SCRAM-SHA-256 over SASL_SSL, as
    kafka-delegation-tokens.sh --create --renewer-principal does."""
    from kafka import KafkaAdminClient
    from kafka.errors import for_code

    from ..wire.messages import CreateDelegationTokenRequest

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, security_protocol="SASL_SSL",
                             ssl_cafile=str(ca), sasl_mechanism="SCRAM-SHA-256",
                             sasl_plain_username=user, sasl_plain_password=password)
    renewer = CreateDelegationTokenRequest.CreatableRenewers
    try:
        answer = send_request(admin, CreateDelegationTokenRequest(
            owner_principal_type=None, owner_principal_name=None, max_lifetime_ms=-1,
            renewers=[renewer(principal_type=r.partition(":")[0], principal_name=r.partition(":")[2])
                      for r in renewers]))
    finally:
        admin.close()
    error = "NONE" if answer.error_code == 0 else for_code(answer.error_code).__name__
    hour = 3_600_000
    return DelegationToken(error, f"{answer.principal_type}:{answer.principal_name}",
                           answer.token_id, bytes(answer.hmac),
                           (answer.max_timestamp_ms - answer.issue_timestamp_ms) / hour,
                           (answer.expiry_timestamp_ms - answer.issue_timestamp_ms) / hour)


class TokenScramClient(ScramClient):
    """kafka-python's SCRAM client with Kafka's `tokenauth=true` extension in the client's
    first message (part of what the server signs), as the Java client sends it for
    `ScramLoginModule required username=<token id> password=<hmac> tokenauth=true;`:
    kafka-python and confluent-kafka have no token login of their own."""

    def first_message(self) -> bytes:
        bare = b"n=" + self.user + b",r=" + self.nonce + b",tokenauth=true"
        self.auth_message += bare
        return b"n,," + bare


class TokenScram(SaslMechanismScram):
    """kafka-python's SCRAM mechanism, logging in with a delegation token."""

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self._scram_client = TokenScramClient(config["sasl_plain_username"],
                                              config["sasl_plain_password"],
                                              config["sasl_mechanism"])


def token_produce(bootstrap: str, token: DelegationToken, *, ca: str | Path,
                  topic: str = "orders", mechanism: str = "SCRAM-SHA-512") -> str:
    """One record from a kafka-python producer logging in with TOKEN (SCRAM with
    tokenauth=true): "wrote offset N" or the error's name."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaError
    from kafka.net import sasl

    # kafka-python picks the mechanism class by name: TokenScram for this producer only.
    sasl.register_sasl_mechanism(mechanism, TokenScram, overwrite=True)
    try:
        producer = KafkaProducer(bootstrap_servers=bootstrap, security_protocol="SASL_SSL",
                                 ssl_cafile=str(ca), sasl_mechanism=mechanism,
                                 sasl_plain_username=token.token_id,
                                 sasl_plain_password=token.password, max_block_ms=5000)
        try:
            return f"wrote offset {producer.send(topic, b'by token').get(timeout=10).offset}"
        finally:
            producer.close()
    except KafkaError as exc:
        return type(exc).__name__
    finally:
        sasl.register_sasl_mechanism(mechanism, SaslMechanismScram, overwrite=True)


def served_throttle(bootstrap: str, topic: str, *, producer_client_id: str,
                    consumer_client_id: str, records: int, record_bytes: int) -> list[dict]:
    """A kafka-python producer sends RECORDS records of RECORD_BYTES to TOPIC as one
    burst, then a consumer reads them back: each row is the client, the bytes it moved,
    and the throttle-time-max (ms) its own metrics recorded from the broker's answers
    (throttle_time_ms). Quotas are the caller's (kafka-configs --entity-type clients)."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id=producer_client_id,
                             linger_ms=50, batch_size=records * record_bytes * 2,
                             max_request_size=records * record_bytes * 2)
    for _ in range(records):
        producer.send(topic, b"x" * record_bytes)
    producer.flush()
    rows = [{"client": producer_client_id, "records": records,
             "throttle-time-max (ms)": producer.metrics()["producer-metrics"]["throttle-time-max"]}]
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id=consumer_client_id,
                             enable_auto_commit=False)
    consumer.assign([TopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    read = 0
    for _ in range(20):
        read += sum(len(batch) for batch in consumer.poll(timeout_ms=500).values())
        if read >= records:
            break
    rows.append({"client": consumer_client_id, "records": read,
                 "throttle-time-max (ms)": consumer.metrics()["consumer-metrics"]["throttle-time-max"]})
    consumer.close()
    return rows


def throttle_over_time(cluster: Cluster, topic: str, *, user: str, producer_byte_rate: int,
                       consumer_byte_rate: int, record_bytes: int, records_per_s: int,
                       seconds: int) -> dict[str, list[tuple[float, float]]]:
    """A producer and a consumer of USER, each going faster than its quota for SECONDS of
    simulated time: the throttle_time_ms each broker answer carried, by second.

    The quotas are set with AlterClientQuotas for the user (kafka-configs --entity-type
    users); the producer sends RECORDS_PER_S records of RECORD_BYTES each second and the
    consumer reads them as fast as it may. Returns {"producer": [(s, ms)], "consumer": ...}
    read from the journal's produce.throttled and fetch.throttled events (0 when a second
    had none)."""
    start = cluster.now_ms
    cluster.admin().alter_client_quotas([
        ({USER: user}, {"producer_byte_rate": producer_byte_rate,
                        "consumer_byte_rate": consumer_byte_rate})])
    login = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-256",
             "sasl_plain_username": user, "sasl_plain_password": f"{user}-secret"}
    producer = cluster.producer(client_id=f"{user}-producer", linger_ms=0, **login)
    consumer = cluster.consumer(topic, client_id=f"{user}-consumer", group_id=f"{user}-app",
                                auto_offset_reset="earliest", **login)
    payload = b"x" * record_bytes
    for second in range(seconds):
        for _ in range(records_per_s):
            producer.send(topic, payload)
        consumer.poll(timeout_ms=0)
        cluster.advance_to(start + (second + 1) * 1000)
        consumer.poll(timeout_ms=0)
    consumer.close()
    series: dict[str, list[tuple[float, float]]] = {}
    for client, kind in (("producer", "produce.throttled"), ("consumer", "fetch.throttled")):
        per_second = [0.0] * seconds
        for event in cluster.journal.of_kind(kind):
            index = (event.time_ms - start) // 1000
            if 0 <= index < seconds:
                per_second[index] = max(per_second[index], event.fields["throttle_time_ms"])
        series[client] = [(float(s + 1), ms) for s, ms in enumerate(per_second)]
    producer.close()  # sends what the quota still holds back, past the chart's end
    return series


def tls_handshake(bootstrap: str, ca: str | Path | None = None,
                  cert: tuple[str | Path, str | Path] | None = None,
                  timeout_s: float = 5.0) -> dict[str, str]:
    """One TLS handshake with the broker at BOOTSTRAP ("host:port"), as a Kafka client's
    TLS layer makes it: trusting CA (None: the system's CAs, as a client without
    ssl_cafile does), presenting CERT (certificate, key) if given, checking the broker's
    name (ssl.endpoint.identification.algorithm=https). Returns what was agreed (version,
    the broker's subject) or how it failed ("error")."""
    import socket
    import ssl

    from ..wire.tls import principal_from_cert

    host, port = bootstrap.rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(ca) if ca is not None else None)
    if cert is not None:
        context.load_cert_chain(str(cert[0]), str(cert[1]))
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s) as raw, \
                context.wrap_socket(raw, server_hostname="localhost") as tls:
            subject = str(principal_from_cert(tls.getpeercert())).removeprefix("User:")
            agreed = {"version": str(tls.version()), "broker": subject}
            # TLS 1.3 finishes the client's side first: a broker that wanted a client
            # certificate says so on the first read.
            tls.settimeout(0.5)
            try:
                tls.recv(1)
            except TimeoutError:
                return agreed
            except ssl.SSLError as exc:
                return {"error": f"{type(exc).__name__}: {exc.reason}"}
            return {"error": "the broker closed the connection"}
    except ssl.SSLError as exc:
        return {"error": f"{type(exc).__name__}: {exc.reason}"}
