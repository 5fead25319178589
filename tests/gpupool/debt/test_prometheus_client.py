"""Reaching a Prometheus: retries, broken answers, the deadline, and every way to authenticate,
against a small HTTP(S) server on 127.0.0.1 that records what it was sent.

SigV4 (Amazon Managed Service for Prometheus) is checked twice without AWS: the request the
server received is signed again by botocore's own SigV4 signer with the same credentials and
time, and its signature is recomputed from AWS's published algorithm (canonical request,
string to sign, derived key), here, by hand.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import http.server
import json
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from gpupool.debt import deadline as deadline_module
from gpupool.debt.deadline import Deadline
from gpupool.debt.prometheus import client as client_module
from gpupool.debt.prometheus.auth import make_auth
from gpupool.debt.prometheus.client import MAX_ATTEMPTS, Client
from gpupool.errors import InputError

VECTOR = json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
    {"metric": {"node": "n1"}, "value": [1, "2"]}]}}).encode()
AT = dt.datetime(2026, 11, 30, 6, tzinfo=dt.UTC)


class Recorder(http.server.BaseHTTPRequestHandler):
    answers: list[tuple[int, bytes, dict[str, str]]] = []
    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        self.seen.append({"path": self.path, "headers": dict(self.headers.items()),
                          "body": body})
        status, data, headers = self.answers.pop(0) if self.answers else (200, VECTOR, {})
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_: Any) -> None:
        return None


@pytest.fixture
def server() -> Iterator[tuple[str, type[Recorder]]]:
    handler = type("H", (Recorder,), {"answers": [], "seen": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}", handler
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=10)


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    delays: list[float] = []
    monkeypatch.setattr(client_module, "sleep", delays.append)
    return delays


def test_answers_are_parsed_and_overload_is_retried_with_backoff(
        server: tuple[str, type[Recorder]], no_sleep: list[float]) -> None:
    url, h = server
    h.answers += [(503, b"busy", {}), (429, b"slow down", {"Retry-After": "2"})]
    c = Client(url)
    assert c.query("up", AT) == [{"metric": {"node": "n1"}, "value": [1, "2"]}]
    assert (c.calls.queries, c.calls.attempts, c.calls.retries) == (1, 3, 2)
    assert len(no_sleep) == 2 and 0.25 <= no_sleep[0] <= 0.5 and no_sleep[1] == 2.0
    sent = h.seen[-1]
    assert sent["path"] == "/api/v1/query"
    assert sent["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    assert b"query=up" in sent["body"] and b"time=1796018400.000" in sent["body"]


@pytest.mark.parametrize(("status", "body", "expected"), [
    (200, b"<html><body>Sign in</body></html>", "answered 200 with HTML, not the Prometheus "
                                                "API's document"),
    (200, b"", "answered 200 with an empty body"),
    (200, VECTOR[:40], "answered 200 with a body that is not its JSON"),
    (200, json.dumps({"status": "success", "data": {"resultType": "matrix", "result": []}})
     .encode(), "answered without a vector result"),
    (400, json.dumps({"status": "error", "errorType": "bad_data", "error": "parse error"})
     .encode(), "refused (400 bad_data: parse error)"),
    (401, json.dumps({"status": "error", "errorType": "unauthorized", "error": "no"})
     .encode(), "(check the credentials)"),
])
def test_broken_answers_are_one_line(server: tuple[str, type[Recorder]], status: int,
                                     body: bytes, expected: str, no_sleep: list[float]) -> None:
    url, h = server
    h.answers.append((status, body, {}))
    with pytest.raises(InputError) as e:
        Client(url).query("up", AT)
    (line,) = e.value.problems
    assert line.startswith(f"{url}: query up: ") and expected in line


def test_no_server_is_one_line_after_the_retries(no_sleep: list[float]) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = Client(f"http://127.0.0.1:{port}")
    with pytest.raises(InputError, match=f"no answer after {MAX_ATTEMPTS} attempts"):
        c.query("up", AT)
    assert c.calls.attempts == MAX_ATTEMPTS and len(no_sleep) == MAX_ATTEMPTS - 1


def test_the_deadline_is_checked_before_each_attempt(server: tuple[str, type[Recorder]],
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     no_sleep: list[float]) -> None:
    url, h = server
    ticks = iter(range(0, 1000, 10))
    monkeypatch.setattr(deadline_module, "clock", lambda: float(next(ticks)))
    h.answers += [(503, b"", {})] * 4
    # created at 0; the first attempt at 10, its backoff reads the clock at 20 (it never
    # sleeps past the deadline), the second attempt would start at 30, after it
    c = Client(url, deadline=Deadline(25))
    with pytest.raises(InputError, match="--deadline 25: the reads did not finish in time "
                                         r"\(Prometheus query not sent\)"):
        c.query("up", AT)
    assert c.calls.attempts == 1 and len(no_sleep) == 1 and no_sleep[0] <= 5


def test_bearer_basic_and_extra_headers(server: tuple[str, type[Recorder]],
                                        tmp_path: Path) -> None:
    url, h = server
    token = tmp_path / "token"
    token.write_text("s3cret-token\n")
    Client(url, make_auth(bearer_file=str(token), headers=["X-Scope-OrgID: ml"])).query("up", AT)
    assert h.seen[-1]["headers"]["Authorization"] == "Bearer s3cret-token"
    assert h.seen[-1]["headers"]["X-Scope-OrgID"] == "ml"
    auth = make_auth(basic_user="reader", environ={"GPUPOOL_PROMETHEUS_PASSWORD": "pw"})
    Client(url, auth).query("up", AT)
    assert h.seen[-1]["headers"]["Authorization"] == "Basic cmVhZGVyOnB3"  # reader:pw
    assert auth.describe() == "basic auth" and "pw" not in repr(auth.describe())


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"basic_user": "reader", "environ": {}}, "expected the password in "
                                              "GPUPOOL_PROMETHEUS_PASSWORD"),
    ({"bearer_file": "/nonexistent"}, "--prometheus-bearer-token-file /nonexistent: expected a "
                                      "file"),
    ({"headers": ["Authorization: x"]}, "set by gpupool itself"),
    ({"headers": ["no colon"]}, "expected 'Name: value'"),
    ({"bearer_file": __file__, "basic_user": "u"}, "expected one way to authenticate"),
    ({"ca_file": "/nonexistent.pem"}, "--prometheus-ca-file /nonexistent.pem: expected a file"),
])
def test_bad_auth_flags_are_one_line(kwargs: dict[str, Any], expected: str) -> None:
    with pytest.raises(InputError, match=expected.replace("(", r"\(")):
        make_auth(**kwargs)


def _tls(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A CA and a server certificate for 127.0.0.1 signed by it (cryptography, no network)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    now = dt.datetime.now(dt.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("test ca")).issuer_name(name("test ca"))
          .public_key(ca_key.public_key()).serial_number(1)
          .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    import ipaddress

    cert = (x509.CertificateBuilder().subject_name(name("127.0.0.1")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(2)
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = tmp_path / "ca.pem", tmp_path / "server.pem", tmp_path / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


def test_a_ca_file_verifies_the_server(tmp_path: Path, no_sleep: list[float]) -> None:
    ca, cert, key = _tls(tmp_path)
    handler = type("H", (Recorder,), {"answers": [], "seen": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"https://127.0.0.1:{httpd.server_port}"
        assert Client(url, make_auth(ca_file=str(ca))).query("up", AT)[0]["value"] == [1, "2"]
        with pytest.raises(InputError, match=r"no answer after 5 attempts .*SSL"):
            Client(url).query("up", AT)  # the system's CAs do not know the test CA
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


# --------------------------------------------------------------------------- SigV4

KEY_ID, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"


def _spec_signature(method: str, url: str, headers: dict[str, str], body: bytes,
                    region: str) -> tuple[str, str]:
    """AWS Signature Version 4 by the book: (signed headers, signature) for the request."""
    auth = headers["Authorization"]
    signed = auth.split("SignedHeaders=")[1].split(",")[0]
    lower = {k.lower(): " ".join(v.split()) for k, v in headers.items()}
    parts = urlsplit(url)
    canonical = "\n".join([
        method, parts.path or "/", "",
        "".join(f"{h}:{lower[h]}\n" for h in signed.split(";")), signed,
        hashlib.sha256(body).hexdigest()])
    stamp = lower["x-amz-date"]
    scope = f"{stamp[:8]}/{region}/aps/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    k = f"AWS4{SECRET}".encode()
    for part in (stamp[:8], region, "aps", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    return signed, hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()


def test_sigv4_signs_what_is_sent_as_botocore_and_the_spec_do(
        server: tuple[str, type[Recorder]], monkeypatch: pytest.MonkeyPatch) -> None:
    import botocore.auth
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    url, h = server
    for k, v in (("AWS_ACCESS_KEY_ID", KEY_ID), ("AWS_SECRET_ACCESS_KEY", SECRET)):
        monkeypatch.setenv(k, v)
    for k in ("AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setattr(botocore.auth, "get_current_datetime",
                        lambda: dt.datetime(2026, 11, 30, 6, 0, 0))
    workspace = f"{url}/workspaces/ws-0123"
    Client(workspace, make_auth(sigv4_region="eu-west-1")).query('sum(up{job="x"})', AT)
    got = h.seen[-1]
    headers = got["headers"]
    assert headers["X-Amz-Date"] == "20261130T060000Z"
    assert headers["Authorization"].startswith(
        f"AWS4-HMAC-SHA256 Credential={KEY_ID}/20261130/eu-west-1/aps/aws4_request, "
        "SignedHeaders=")
    sent_url = f"{url}{got['path']}"
    signed, signature = _spec_signature("POST", sent_url, headers, got["body"], "eu-west-1")
    assert {"host", "x-amz-date", "content-type"} <= set(signed.split(";"))
    assert headers["Authorization"].endswith(f"Signature={signature}")
    again = AWSRequest(method="POST", url=sent_url, data=got["body"], headers={
        k: v for k, v in headers.items() if k.lower() in signed.split(";") and k.lower() not in (
            "x-amz-date", "host")})
    SigV4Auth(Credentials(KEY_ID, SECRET), "aps", "eu-west-1").add_auth(again)
    assert again.headers["Authorization"] == headers["Authorization"]
