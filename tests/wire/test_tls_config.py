"""Kafka's ssl.* keys as minikafka reads them (wire/tls.py): PEM keystores from a file or
inline, the client certificate's principal, and clear refusals for what Python cannot
read. And the listener keys of server.properties (core/security_config.py)."""
from __future__ import annotations

import ssl
import subprocess
import sys

import pytest
from tls_certs import make_certificates

from minikafka.core.security_config import client_listeners, parse_jaas
from minikafka.core.server_config import parse_server_config
from minikafka.wire.tls import TlsConfigError, principal_from_cert, server_context


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certificates(tmp_path_factory.mktemp("certs"))


def test_pem_keystore_from_a_file_or_inline(certs):
    context = server_context({"ssl.keystore.type": "PEM",
                              "ssl.keystore.location": str(certs.broker),
                              "ssl.truststore.type": "PEM",
                              "ssl.truststore.location": str(certs.ca),
                              "ssl.client.auth": "required"})
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    inline = server_context({"ssl.keystore.type": "PEM",
                             "ssl.keystore.key": certs.broker_key.read_text(),
                             "ssl.keystore.certificate.chain": certs.broker_cert.read_text(),
                             "ssl.truststore.certificates": certs.ca.read_text(),
                             "ssl.enabled.protocols": "TLSv1.3"})
    assert inline.verify_mode == ssl.CERT_NONE
    assert inline.minimum_version == ssl.TLSVersion.TLSv1_3


@pytest.mark.parametrize("settings,message", [
    ({"ssl.keystore.location": "broker.jks"}, "Python cannot read Java keystores"),
    ({}, "an SSL listener needs a keystore"),
    ({"ssl.keystore.type": "PEM", "ssl.keystore.location": "/no/such.pem"},
     "cannot load the keystore (/no/such.pem)"),
    ({"ssl.keystore.type": "PEM", "ssl.keystore.location": "{broker}",
      "ssl.client.auth": "sometimes"}, "Invalid value sometimes for configuration ssl.client.auth"),
])
def test_what_cannot_be_used_is_refused_clearly(certs, settings, message):
    settings = {k: v.format(broker=certs.broker) for k, v in settings.items()}
    with pytest.raises(TlsConfigError) as refused:
        server_context(settings)
    assert message in str(refused.value)


def test_pkcs12_needs_the_cryptography_package(certs, tmp_path, monkeypatch):
    store = tmp_path / "broker.p12"
    subprocess.run(["openssl", "pkcs12", "-export", "-in", str(certs.broker_cert), "-inkey",
                    str(certs.broker_key), "-passout", "pass:secret", "-out", str(store)],
                   check=True, capture_output=True)
    for name in ["cryptography", *[m for m in sys.modules if m.startswith("cryptography.")]]:
        monkeypatch.setitem(sys.modules, name, None)  # as on a machine without it
    with pytest.raises(TlsConfigError, match=r"needs the 'cryptography' package"):
        server_context({"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(store),
                        "ssl.keystore.password": "secret"})


def test_a_client_certificate_names_the_principal():
    cert = {"subject": ((("organizationName", "minikafka"),), (("organizationalUnitName",
                                                                 "course"),),
                        (("commonName", "alice, the first"),))}
    assert principal_from_cert(cert) == r"User:CN=alice\, the first,OU=course,O=minikafka"
    assert principal_from_cert(None) is None and principal_from_cert({}) is None


def test_security_keys_are_read_not_ignored():
    config = parse_server_config({
        "listeners": "SASL_SSL://:9093",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": "x",
        "ssl.keystore.location": "k.pem", "super.users": "User:admin",
        "num.network.threads": "3"})
    assert set(config.security) == {"listener.name.sasl_ssl.plain.sasl.jaas.config",
                                    "ssl.keystore.location", "super.users"}
    assert config.ignored == ["num.network.threads"] and config.unknown == []


@pytest.mark.parametrize("raw,message", [
    ({"listeners": "INTERNAL://:9092"}, "No security protocol defined for listener INTERNAL"),
    ({"listeners": "SASL_PLAINTEXT://:9092", "sasl.enabled.mechanisms": "GSSAPI"},
     "SASL mechanism(s) GSSAPI are not supported"),
    ({"listeners": "SASL_PLAINTEXT://:9092", "sasl.enabled.mechanisms": "PLAIN"},
     "Could not find a 'listener.name.sasl_plaintext.plain.sasl.jaas.config' entry"),
])
def test_listener_settings_kafka_would_refuse(raw, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        client_listeners(raw)


def test_jaas_lines_parse_as_kafkas_jaasconfig():
    [entry] = parse_jaas('org.apache.kafka.common.security.plain.PlainLoginModule required '
                         'username="admin" password="a \\"quoted\\" secret" user_bob=bob-pw;')
    assert entry.flag == "required"
    assert entry.options == {"username": "admin", "password": 'a "quoted" secret',
                             "user_bob": "bob-pw"}
    with pytest.raises(ValueError, match="must end with ';'"):
        parse_jaas("org.example.Module required a=b")


@pytest.mark.parametrize("lines,message", [
    (["listeners=SSL://127.0.0.1:9092", "ssl.keystore.location=broker.jks"],
     "minikafka serve: ssl.keystore.type=JKS (Kafka's default): Python cannot read Java "
     "keystores"),
    (["listeners=SASL_PLAINTEXT://127.0.0.1:9092", "sasl.enabled.mechanisms=GSSAPI"],
     "minikafka serve: SASL mechanism(s) GSSAPI are not supported by minikafka"),
    (["listeners=SASL_PLAINTEXT://127.0.0.1:9092", "sasl.enabled.mechanisms=OAUTHBEARER",
      "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common."
      "security.oauthbearer.OAuthBearerLoginModule required;",
      "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class=org.apache."
      "kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"],
     "minikafka serve: minikafka validates OAUTHBEARER tokens as Kafka's default (unsecured "
     "JWT) handler only"),
    (["authorizer.class.name=kafka.security.authorizer.AclAuthorizer"],
     "minikafka serve: authorizer.class.name=kafka.security.authorizer.AclAuthorizer: "
     "minikafka has Kafka's KRaft authorizer only"),
])
def test_serve_refuses_security_it_cannot_provide(tmp_path, lines, message):
    config = tmp_path / "server.properties"
    config.write_text("\n".join(lines) + "\n")
    done = subprocess.run([sys.executable, "-c", "from minikafka.cli import main; "
                           "raise SystemExit(main())", "serve", str(config), "--port", "0"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert message in done.stderr


def test_sasl_ssl_asks_for_client_certificates_only_with_the_listener_prefix():
    """Kafka's ChannelBuilders (KIP-684): the broker-wide ssl.client.auth is for SSL
    listeners; a SASL_SSL listener reads only listener.name.<listener>.ssl.client.auth."""
    base = {"listeners": "SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
            "sasl.enabled.mechanisms": "SCRAM-SHA-256",
            "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config":
                "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            "ssl.client.auth": "required"}
    broker_wide = {c.name: c.ssl["ssl.client.auth"] for c in client_listeners(base)}
    assert broker_wide == {"SSL": "required", "SASL_SSL": "none"}
    prefixed = {**base, "listener.name.sasl_ssl.ssl.client.auth": "requested"}
    assert {c.name: c.ssl["ssl.client.auth"] for c in client_listeners(prefixed)} == \
        {"SSL": "required", "SASL_SSL": "requested"}
