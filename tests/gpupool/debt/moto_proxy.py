"""A proxy in front of the moto server that answers some requests itself, for what moto cannot
do (refuse AssumeRole, disable a region, send a 200 that is not the API's document).

A test subclasses :class:`FaultProxy`, says in :meth:`answer` which requests it answers, and
serves it with :func:`serving`, which points ``AWS_ENDPOINT_URL`` at it; the rest goes to moto.
"""

from __future__ import annotations

import http.server
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import pytest

Reply = tuple[int, dict[str, str], bytes]


class FaultProxy(http.server.BaseHTTPRequestHandler):
    upstream = ""  # moto's URL, set by serving()

    def answer(self, data: bytes) -> Reply | None:
        """The reply to give instead of moto's, or None to forward the request."""
        return None

    def do_POST(self) -> None:
        data = self.rfile.read(int(self.headers.get("content-length") or 0))
        reply = self.answer(data) or self._forward(data)
        status, headers, body = reply
        self.send_response(status)
        for k, v in headers.items():
            if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(k, v)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _forward(self, data: bytes) -> Reply:
        req = urllib.request.Request(self.upstream + self.path, data=data, method="POST",
                                     headers={k: v for k, v in self.headers.items()
                                              if k.lower() != "host"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def log_message(self, *_: Any) -> None:
        return None


P = TypeVar("P", bound=FaultProxy)


@contextmanager
def serving(handler: type[P], upstream: str,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[type[P]]:
    """Serve ``handler`` (a fresh subclass, so class attributes stay the test's) on loopback."""
    served: type[P] = type("Served", (handler,), {"upstream": upstream})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), served)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{server.server_port}")
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
