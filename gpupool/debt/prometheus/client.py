# ruff: noqa: RUF003  (×, − and – are the signs users read)
"""The Prometheus HTTP API: ``POST /api/v1/query`` and ``/api/v1/query_range``, or one line.

Queries are sent as form bodies (PromQL this long does not belong in a URL), through urllib3
with a connect timeout of 10 s and a read timeout of at most ``READ_TIMEOUT_S``, never longer
than the :class:`~gpupool.debt.deadline.Deadline` leaves. Connection failures, timeouts, 429
and 502-504 are retried up to ``MAX_ATTEMPTS`` attempts a query with exponential backoff and
jitter (``Retry-After`` honoured), each attempt signed again (SigV4 dates expire); every attempt
is counted. An answer is accepted only when it is the API's document: JSON with ``status:
success`` and the ``resultType`` asked for. Anything else (an HTML login page, an empty or cut
body, ``status: error``) is one :class:`InputError` line naming the source and the query.
Prometheus's own ``warnings`` are kept for the report's findings.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

from gpupool.debt.deadline import Deadline
from gpupool.debt.prometheus.auth import Auth
from gpupool.errors import InputError

MAX_ATTEMPTS = 5
READ_TIMEOUT_S = 120.0
CONNECT_TIMEOUT_S = 10.0
BACKOFF_S = 0.5
BACKOFF_CAP_S = 15.0
MAX_BODY = 1024 * 1024 * 1024  # 1 GiB of JSON: 10,000 pods × a week of hourly points is ~60 MB
RETRY_STATUS = frozenset({429, 502, 503, 504})
sleep: Callable[[float], None] = time.sleep  # tests count backoffs instead of waiting


@dataclass
class Calls:
    queries: int = 0
    attempts: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def retries(self) -> int:
        return self.attempts - self.queries


def check_url(url: str, flag: str = "--prometheus") -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or (
            parts.fragment) or any(c.isspace() for c in url):
        raise InputError(f"{flag} {url}: expected the base URL of a Prometheus HTTP API, such "
                         "as http://prometheus.monitoring.svc:9090 or https://aps-workspaces."
                         "us-east-1.amazonaws.com/workspaces/ws-…")
    return url.rstrip("/")


class Client:
    """One Prometheus (or Thanos, Mimir, Amazon Managed Service for Prometheus) endpoint."""

    def __init__(self, url: str, auth: Auth | None = None, deadline: Deadline | None = None
                 ) -> None:
        import urllib3

        self.url = check_url(url)
        self.auth = auth or Auth()
        self.deadline = deadline or Deadline()
        self.calls = Calls()
        self._pool = urllib3.PoolManager(ssl_context=self.auth.ssl_context(), retries=False,
                                         num_pools=2, maxsize=2)

    def query(self, expr: str, at: datetime) -> list[dict[str, Any]]:
        return self._ask("query", {"query": expr, "time": f"{at.timestamp():.3f}"}, "vector")

    def query_range(self, expr: str, start: datetime, end: datetime, step_s: int
                    ) -> list[dict[str, Any]]:
        return self._ask("query_range", {"query": expr, "start": f"{start.timestamp():.3f}",
                                         "end": f"{end.timestamp():.3f}", "step": f"{step_s}s"},
                         "matrix")

    # -- transport -----------------------------------------------------------------------

    def _ask(self, api: str, form: dict[str, str], expected: str) -> list[dict[str, Any]]:
        import urllib3

        url = f"{self.url}/api/v1/{api}"
        body = urlencode(form).encode()
        self.calls.queries += 1
        what = f"{self.url}: {api} {_short(form['query'])}"
        for attempt in range(1, MAX_ATTEMPTS + 1):
            left = self.deadline.check(f"Prometheus {api}")
            self.calls.attempts += 1
            headers = self.auth.sign("POST", url, body, {
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json", "User-Agent": "gpupool-debt"})
            timeout = urllib3.Timeout(connect=min(CONNECT_TIMEOUT_S, left),
                                      read=min(READ_TIMEOUT_S, left))
            try:
                resp = self._pool.request("POST", url, body=body, headers=headers,
                                          timeout=timeout, preload_content=False,
                                          redirect=False)
                data = resp.read(MAX_BODY + 1)
                resp.release_conn()
            except urllib3.exceptions.HTTPError as e:
                if attempt == MAX_ATTEMPTS:
                    raise InputError(f"{what}: no answer after {attempt} attempts "
                                     f"({type(e).__name__}: {_reason(e)})") from None
                self._backoff(attempt, None)
                continue
            if resp.status in RETRY_STATUS and attempt < MAX_ATTEMPTS:
                self._backoff(attempt, resp.headers.get("Retry-After"))
                continue
            return self._document(what, resp.status, data, expected)
        raise AssertionError("unreachable")  # pragma: no cover

    def _backoff(self, attempt: int, retry_after: str | None) -> None:
        delay = min(BACKOFF_CAP_S, BACKOFF_S * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)
        if retry_after and retry_after.strip().isdigit():
            delay = min(BACKOFF_CAP_S, float(retry_after.strip()))
        delay = min(delay, max(self.deadline.remaining(), 0.0))
        sleep(delay)

    def _document(self, what: str, status: int, data: bytes, expected: str
                  ) -> list[dict[str, Any]]:
        if len(data) > MAX_BODY:
            raise InputError(f"{what}: answered more than {MAX_BODY:,} bytes; read a shorter "
                             "window or a coarser --period")
        try:
            doc = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            doc = None
        if not isinstance(doc, dict) or doc.get("status") not in ("success", "error"):
            shown = "an empty body" if not data.strip() else (
                "HTML" if data.lstrip()[:1] == b"<" else "a body that is not its JSON")
            raise InputError(f"{what}: answered {status} with {shown}, not the Prometheus "
                             "API's document (a proxy's login page, a cut answer?); nothing "
                             "was read")
        if doc["status"] == "error" or status >= 400:
            kind, message = doc.get("errorType", status), doc.get("error", "")
            hint = " (check the credentials)" if status in (401, 403) else ""
            raise InputError(f"{what}: refused ({status} {kind}: {_short(str(message), 200)})"
                             f"{hint}")
        result = doc.get("data")
        if not isinstance(result, dict) or result.get("resultType") != expected or (
                not isinstance(result.get("result"), list)):
            raise InputError(f"{what}: answered without a {expected} result; nothing was read")
        for w in doc.get("warnings") or ():
            self.calls.warnings.append(f"{self.url}: {_short(str(w), 300)}")
        return list(result["result"])


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _reason(e: Exception) -> str:
    inner = getattr(e, "reason", None)
    return _short(str(inner or e), 160)
