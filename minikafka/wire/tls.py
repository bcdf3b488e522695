"""TLS for SSL and SASL_SSL listeners: an ssl.SSLContext from Kafka's ssl.* keys.

What Kafka 4.4 reads and what Python's ssl module can load:

- ssl.keystore.type=PEM with ssl.keystore.location (one file: the private key, PKCS#8,
  and the certificate chain) or the inline ssl.keystore.key and
  ssl.keystore.certificate.chain; ssl.key.password for an encrypted key.
- ssl.keystore.type=PKCS12 with ssl.keystore.location and ssl.keystore.password: read
  with the `cryptography` package when it is installed (pip install cryptography).
- JKS, Java's own format, Python cannot read: convert it once with
  `keytool -importkeystore -srckeystore broker.jks -destkeystore broker.p12
  -deststoretype PKCS12`, or use PEM.
- ssl.truststore.type=PEM with ssl.truststore.location or the inline
  ssl.truststore.certificates (PKCS12 as above): the CAs client certificates are
  checked against, with ssl.client.auth=required or requested (default none).
- ssl.enabled.protocols (default TLSv1.2,TLSv1.3).

A client authenticated by certificate is `User:<its subject's DN>`, as Kafka's
default ssl.principal.mapping.rules print it ("CN=alice,OU=course,O=minikafka"), or the
name the listener's ssl.principal.mapping.rules make of it (core.ssl_principal).
"""
from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Mapping
from typing import Any

from ..core.ssl_principal import SslPrincipalMapper

__all__ = ["TlsConfigError", "principal_from_cert", "server_context"]


class TlsConfigError(ValueError):
    """An ssl.* setting minikafka cannot use: says which, and what to do."""


def _temp_pem(text: str) -> str:
    fd, path = tempfile.mkstemp(prefix="minikafka-", suffix=".pem")
    with os.fdopen(fd, "w") as f:
        f.write(text.replace("\\n", "\n"))
    return path


def _pkcs12_to_pem(path: str, password: str | None, key_password: str | None) -> tuple[str, str]:
    """(certificate chain PEM, private key PEM) from a PKCS12 file, with `cryptography`."""
    try:
        from cryptography.hazmat.primitives.serialization import (
            BestAvailableEncryption,
            Encoding,
            NoEncryption,
            PrivateFormat,
            pkcs12,
        )
    except ImportError:
        raise TlsConfigError(
            f"ssl.keystore.type=PKCS12 ({path}) needs the 'cryptography' package, from "
            "minikafka's [tls] extra (pip install 'minikafka[tls]'); or give a PEM keystore: "
            "ssl.keystore.type=PEM") from None
    with open(path, "rb") as f:
        key, cert, extra = pkcs12.load_key_and_certificates(
            f.read(), password.encode() if password else None)
    if key is None or cert is None:
        raise TlsConfigError(f"{path} holds no private key and certificate")
    chain = b"".join(c.public_bytes(Encoding.PEM) for c in [cert, *(extra or [])])
    encryption = BestAvailableEncryption(key_password.encode()) if key_password else NoEncryption()
    return chain.decode(), key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8,
                                             encryption).decode()


def _pkcs12_cas(path: str, password: str | None) -> str:
    try:
        from cryptography.hazmat.primitives.serialization import Encoding, pkcs12
    except ImportError:
        raise TlsConfigError(
            f"ssl.truststore.type=PKCS12 ({path}) needs the 'cryptography' package (pip install "
            "cryptography); or give a PEM truststore: ssl.truststore.type=PEM") from None
    with open(path, "rb") as f:
        _, cert, extra = pkcs12.load_key_and_certificates(
            f.read(), password.encode() if password else None)
    certs = [c for c in [cert, *(extra or [])] if c is not None]
    return b"".join(c.public_bytes(Encoding.PEM) for c in certs).decode()


def _store_type(settings: Mapping[str, str], key: str) -> str:
    kind = settings.get(key, "JKS").strip().upper()
    if kind == "JKS":
        store = key.split(".")[1]
        raise TlsConfigError(
            f"{key}=JKS (Kafka's default): Python cannot read Java keystores; convert it "
            f"with keytool -importkeystore -deststoretype PKCS12, or set {key}=PEM and give "
            f"the {store} as PEM")
    if kind not in ("PEM", "PKCS12"):
        raise TlsConfigError(f"Invalid value {kind} for configuration {key}")
    return kind


def server_context(settings: Mapping[str, str]) -> ssl.SSLContext:
    """A server-side SSLContext from a listener's ssl.* settings (TlsConfigError if
    minikafka cannot use them)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    protocols = [p.strip() for p in settings.get("ssl.enabled.protocols",
                                                  "TLSv1.2,TLSv1.3").split(",") if p.strip()]
    versions = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
    chosen = [versions[p] for p in protocols if p in versions]
    if not chosen:
        raise TlsConfigError(f"ssl.enabled.protocols={','.join(protocols)}: minikafka serves "
                             "TLSv1.2 and TLSv1.3")
    context.minimum_version, context.maximum_version = min(chosen), max(chosen)
    temps: list[str] = []
    try:
        _load_keystore(context, settings, temps)
        _load_truststore(context, settings, temps)
    finally:
        for path in temps:
            os.unlink(path)
    auth = settings.get("ssl.client.auth", "none").strip().lower()
    if auth not in ("none", "requested", "required"):
        raise TlsConfigError(f"Invalid value {auth} for configuration ssl.client.auth")
    context.verify_mode = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL,
                           "required": ssl.CERT_REQUIRED}[auth]
    return context


def _load_keystore(context: ssl.SSLContext, settings: Mapping[str, str],
                   temps: list[str]) -> None:
    key_password = settings.get("ssl.key.password") or None
    chain, key = settings.get("ssl.keystore.certificate.chain"), settings.get("ssl.keystore.key")
    location = settings.get("ssl.keystore.location")
    if chain and key:
        if settings.get("ssl.keystore.type", "PEM").strip().upper() != "PEM":
            raise TlsConfigError("ssl.keystore.certificate.chain and ssl.keystore.key need "
                                 "ssl.keystore.type=PEM")
        certfile, keyfile = _temp_pem(chain), _temp_pem(key)
        temps += [certfile, keyfile]
    elif location:
        if _store_type(settings, "ssl.keystore.type") == "PKCS12":
            chain_pem, key_pem = _pkcs12_to_pem(location, settings.get("ssl.keystore.password"),
                                                key_password)
            certfile, keyfile = _temp_pem(chain_pem), _temp_pem(key_pem)
            temps += [certfile, keyfile]
        else:
            certfile, keyfile = location, None
    else:
        raise TlsConfigError("an SSL listener needs a keystore: ssl.keystore.type=PEM with "
                             "ssl.keystore.location, or ssl.keystore.certificate.chain and "
                             "ssl.keystore.key")
    try:
        context.load_cert_chain(certfile, keyfile, password=key_password)
    except (ssl.SSLError, OSError) as exc:
        raise TlsConfigError(f"cannot load the keystore ({location or 'inline PEM'}): "
                             f"{exc}") from None


def _load_truststore(context: ssl.SSLContext, settings: Mapping[str, str],
                     temps: list[str]) -> None:
    inline, location = settings.get("ssl.truststore.certificates"), \
        settings.get("ssl.truststore.location")
    try:
        if inline:
            context.load_verify_locations(cadata=inline.replace("\\n", "\n"))
        elif location:
            if _store_type(settings, "ssl.truststore.type") == "PKCS12":
                context.load_verify_locations(cadata=_pkcs12_cas(
                    location, settings.get("ssl.truststore.password")))
            else:
                context.load_verify_locations(cafile=location)
    except (ssl.SSLError, OSError) as exc:
        raise TlsConfigError(f"cannot load the truststore ({location or 'inline PEM'}): "
                             f"{exc}") from None


_DN_NAMES = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU",
             "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST",
             "emailAddress": "EMAILADDRESS", "domainComponent": "DC", "streetAddress": "STREET"}


def principal_from_cert(cert: dict[str, Any] | None,
                        mapper: SslPrincipalMapper | None = None) -> str | None:
    """`User:CN=...,O=...` (RFC 2253 order, as Java's X500Principal.getName prints it), or
    `User:<the name mapper's rules give>`, for a verified peer certificate; None without
    one. core.ssl_principal.NoMatchingRule when no rule maps the subject."""
    if not cert or "subject" not in cert:
        return None
    parts = []
    for rdn in reversed(cert["subject"]):
        parts.append("+".join(f"{_DN_NAMES.get(k, k)}={_escape(v)}" for k, v in rdn))
    dn = ",".join(parts)
    return "User:" + (mapper.name(dn) if mapper is not None else dn)


def _escape(value: str) -> str:
    out = "".join("\\" + c if c in ',+"\\<>;' else c for c in value)
    if out.startswith(("#", " ")):
        out = "\\" + out
    return out
