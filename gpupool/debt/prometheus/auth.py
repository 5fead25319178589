"""How to reach a Prometheus: a bearer token, basic auth, a CA file, extra headers, or SigV4.

- ``--prometheus-bearer-token-file FILE``: ``Authorization: Bearer <token>`` (a service
  account token, an OIDC token; Grafana Cloud, OpenShift's Thanos querier);
- ``--prometheus-basic-auth USER`` with the password in ``GPUPOOL_PROMETHEUS_PASSWORD`` or
  ``--prometheus-password-file FILE`` (never on the command line, where ``ps`` shows it);
- ``--prometheus-ca-file FILE``: the CA bundle that signed the server's certificate;
- ``--prometheus-header 'Name: value'``: e.g. Mimir's ``X-Scope-OrgID`` tenant;
- ``--prometheus-sigv4 REGION``: Amazon Managed Service for Prometheus. Each request is signed
  with botocore's own SigV4 signer (service ``aps``) and the standard credential chain, so the
  signature is AWS's, not a copy of it.

Secrets are read from files or the environment once, checked before any request, and never
printed: a bad one is named by its flag only.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpupool.errors import InputError

PASSWORD_ENV = "GPUPOOL_PROMETHEUS_PASSWORD"
SIGV4_SERVICE = "aps"
MAX_SECRET_BYTES = 64 * 1024


def _secret(path: str, flag: str) -> str:
    try:
        p = Path(path)
        if not p.is_file():
            raise InputError(f"{flag} {path}: expected a file holding the secret")
        if p.stat().st_size > MAX_SECRET_BYTES:
            raise InputError(f"{flag} {path}: expected a secret of at most 64 KiB")
        value = p.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{flag} {path}: cannot read it ({getattr(e, 'strerror', e)})"
                         ) from None
    if not value or any(c in value for c in "\r\n\x00"):
        raise InputError(f"{flag} {path}: expected one line holding the secret")
    return value


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not name or not all(c.isalnum() or c in "-_" for c in name) or (
            any(c in value for c in "\r\n\x00")):
        raise InputError(f"--prometheus-header {text!r}: expected 'Name: value', such as "
                         "'X-Scope-OrgID: ml-platform'")
    if name.lower() in ("authorization", "host", "content-length"):
        raise InputError(f"--prometheus-header {name}: set by gpupool itself; use "
                         "--prometheus-bearer-token-file or --prometheus-basic-auth")
    return name, value


@dataclass(frozen=True)
class Auth:
    bearer: str | None = None
    basic: tuple[str, str] | None = None
    ca_file: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    sigv4_region: str | None = None
    credentials: Any = None  # botocore credentials, resolved once for SigV4

    def describe(self) -> str:
        """How the source is reached, for the report (never a secret)."""
        kinds = [k for k, on in (("bearer token", self.bearer), ("basic auth", self.basic),
                                 (f"SigV4 ({self.sigv4_region})", self.sigv4_region),
                                 ("CA file", self.ca_file)) if on]
        return ", ".join(kinds) or "no authentication"

    def ssl_context(self) -> ssl.SSLContext | None:
        if self.ca_file is None:
            return None
        try:
            return ssl.create_default_context(cafile=self.ca_file)
        except (OSError, ssl.SSLError) as e:
            raise InputError(f"--prometheus-ca-file {self.ca_file}: expected PEM "
                             f"certificates ({e})") from None

    def sign(self, method: str, url: str, body: bytes, headers: dict[str, str]
             ) -> dict[str, str]:
        """The headers to send: given ones, then authentication (SigV4 signs all of them)."""
        out = {**headers, **self.headers}
        if self.bearer is not None:
            out["Authorization"] = f"Bearer {self.bearer}"
        elif self.basic is not None:
            import base64

            pair = f"{self.basic[0]}:{self.basic[1]}".encode()
            out["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        if self.sigv4_region is not None:
            from botocore.auth import SigV4Auth
            from botocore.awsrequest import AWSRequest

            creds = self.credentials
            if hasattr(creds, "get_frozen_credentials"):  # refreshable: one consistent set
                creds = creds.get_frozen_credentials()
            request = AWSRequest(method=method, url=url, data=body, headers=out)
            SigV4Auth(creds, SIGV4_SERVICE, self.sigv4_region).add_auth(request)
            out = dict(request.headers.items())
        return out


def make_auth(*, bearer_file: str | None = None, basic_user: str | None = None,
              password_file: str | None = None, ca_file: str | None = None,
              headers: Sequence[str] = (), sigv4_region: str | None = None,
              environ: Mapping[str, str] | None = None) -> Auth:
    """Everything the flags name, read and checked now (see the module docstring)."""
    env = os.environ if environ is None else environ
    if sum(x is not None for x in (bearer_file, basic_user, sigv4_region)) > 1:
        raise InputError("--prometheus-bearer-token-file, --prometheus-basic-auth and "
                         "--prometheus-sigv4: expected one way to authenticate, got several")
    bearer = _secret(bearer_file, "--prometheus-bearer-token-file") if bearer_file else None
    basic = None
    if basic_user is not None:
        if not basic_user or ":" in basic_user:
            raise InputError(f"--prometheus-basic-auth {basic_user!r}: expected a user name "
                             "without ':'")
        if password_file:
            password = _secret(password_file, "--prometheus-password-file")
        elif env.get(PASSWORD_ENV):
            password = env[PASSWORD_ENV]
        else:
            raise InputError(f"--prometheus-basic-auth {basic_user}: expected the password in "
                             f"{PASSWORD_ENV} or --prometheus-password-file")
        basic = (basic_user, password)
    elif password_file:
        raise InputError("--prometheus-password-file: expected --prometheus-basic-auth USER "
                         "with it")
    if ca_file is not None and not Path(ca_file).is_file():
        raise InputError(f"--prometheus-ca-file {ca_file}: expected a file of PEM certificates")
    credentials = None
    if sigv4_region is not None:
        credentials = _aws_credentials(sigv4_region)
    auth = Auth(bearer, basic, ca_file, dict(_header(h) for h in headers), sigv4_region,
                credentials)
    auth.ssl_context()  # a CA file that is no PEM: said now, not at the first request
    return auth


def _aws_credentials(region: str) -> Any:
    import boto3

    if not region or not all(c.isalnum() or c == "-" for c in region):
        raise InputError(f"--prometheus-sigv4 {region!r}: expected an AWS region such as "
                         "us-east-1")
    credentials = boto3.session.Session().get_credentials()
    if credentials is None:
        raise InputError(f"--prometheus-sigv4 {region}: expected AWS credentials to sign with "
                         "(AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, SSO, or an "
                         "instance role)")
    return credentials
