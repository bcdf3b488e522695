"""A throwaway certificate authority for the TLS tests, made with the openssl command.

    certs = make_certificates(tmp_path)
    certs.ca            # the CA certificate (PEM): clients' ssl_cafile, brokers' truststore
    certs.broker        # the broker's private key and certificate chain in one PEM file
                        # (ssl.keystore.type=PEM, ssl.keystore.location)
    certs.client_cert, certs.client_key   # a client certificate, CN=alice,OU=course,O=minikafka

EC P-256 keys (quick to make), valid for localhost and 127.0.0.1, for ten years.
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

CLIENT_DN = "CN=alice,OU=course,O=minikafka"


@dataclass(frozen=True)
class Certificates:
    ca: Path
    broker: Path
    broker_cert: Path
    broker_key: Path
    client_cert: Path
    client_key: Path
    directory: Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _key(name: str, cwd: Path) -> None:
    # PKCS#8, the form Kafka's PEM keystores take
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-out", name, cwd=cwd)


def _sign(name: str, subject: str, cwd: Path, extensions: str) -> None:
    _key(f"{name}.key", cwd)
    _openssl("req", "-new", "-key", f"{name}.key", "-subj", subject, "-out", f"{name}.csr",
             cwd=cwd)
    (cwd / f"{name}.ext").write_text(extensions)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "3650", "-sha256", "-extfile", f"{name}.ext",
             "-out", f"{name}.pem", cwd=cwd)


def make_certificates(directory: Path) -> Certificates:
    if shutil.which("openssl") is None:
        pytest.fail("the TLS tests need the openssl command (Debian package openssl)")
    directory.mkdir(parents=True, exist_ok=True)
    _key("ca.key", directory)
    _openssl("req", "-x509", "-new", "-key", "ca.key", "-subj", "/O=minikafka/CN=minikafka test CA",
             "-days", "3650", "-sha256", "-out", "ca.pem", cwd=directory)
    _sign("broker", "/O=minikafka/CN=localhost", directory,
          "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    _sign("client", "/O=minikafka/OU=course/CN=alice", directory,
          "extendedKeyUsage=clientAuth\n")
    broker = directory / "broker-keystore.pem"
    broker.write_text((directory / "broker.key").read_text()
                      + (directory / "broker.pem").read_text())
    return Certificates(directory / "ca.pem", broker, directory / "broker.pem",
                        directory / "broker.key", directory / "client.pem",
                        directory / "client.key", directory)
