"""netcheck against peers that misbehave (issue 16, items 8 and 9), on loopback only.

The server: a session ends at its time limit whatever the peer trickles, ``accept`` failures do
not stop it, its log cannot be flooded, a token keeps everybody else out, absurd options are
refused. The probe: an overall deadline, the bandwidth timed on its own clock (a server's
count is checked, never trusted for a figure), and targets and figures checked before any
traffic. Nothing here waits on a wall-clock bound: a peer's misbehaviour is counted (bytes it
sent before it was cut), events are awaited (a log line), and timeouts only end a hang.
"""

from __future__ import annotations

import contextlib
import select
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from netcheck_support import ROOT, ServerProcess, gpupool_cmd

from gpupool.errors import InputError
from gpupool.netcheck import protocol as p
from gpupool.netcheck.link import Deadline, Link
from gpupool.netcheck.probe import measure_bandwidth, measure_rtt
from gpupool.netcheck.ratelog import RateLimitedLog
from gpupool.netcheck.server import Server

TOKEN = "0123456789abcdef0123456789abcdef"


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(gpupool_cmd("netcheck", *args), cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@contextlib.contextmanager
def _serving(**kwargs: object) -> Iterator[tuple[Server, list[str]]]:
    lines: list[str] = []
    srv = Server("127.0.0.1", 0, log=lines.append, **kwargs)  # type: ignore[arg-type]
    thread = threading.Thread(target=srv.serve_forever, kwargs={"grace": 0.2}, daemon=True)
    thread.start()
    try:
        yield srv, lines
    finally:
        srv.stop()
        thread.join(60)


def _closed(conn: socket.socket, wait: float) -> bool:
    """True once the peer has closed (or reset) the connection; waits at most ``wait``."""
    if not select.select([conn], [], [], wait)[0]:
        return False
    try:
        return conn.recv(4096) == b""
    except OSError:
        return True


def _trickle(address: tuple[str, int], data: bytes, most: int) -> int:
    """Send ``data`` a byte every 50 ms until the server hangs up; the bytes sent by then (or
    ``most`` when it never did)."""
    conn = socket.create_connection(address, timeout=60)
    try:
        for sent, byte in enumerate(data[:most]):
            try:
                conn.sendall(bytes([byte]))
            except OSError:
                return sent
            if _closed(conn, 0.05):
                return sent + 1
        return most
    finally:
        conn.close()


# -- the server -------------------------------------------------------------------------------


def test_a_trickling_peer_is_cut_at_the_session_limit_and_frees_its_slot() -> None:
    # an idle timeout that never fires (a byte every 50 ms) and a 0.5 s session limit: before,
    # the limit was looked at between messages only, so two peers trickling a 64 KiB echo
    # message held both slots for an hour each
    with _serving(max_sessions=2, idle_timeout=600, max_seconds=0.5) as (srv, lines):
        hello = p.hello(p.ECHO, p.MAX_ECHO_BYTES)
        sent: list[int] = []
        peers = [threading.Thread(target=lambda: sent.append(
            _trickle(srv.address, hello + bytes(p.MAX_ECHO_BYTES), most=600)))
            for _ in range(2)]
        for t in peers:
            t.start()
        for t in peers:
            t.join()
        assert len(sent) == 2 and all(n < 600 for n in sent), sent  # cut, however slow
        assert measure_rtt(*srv.address, seconds=0.1).samples > 0  # the slots are free again
    assert sum("ended at the session time limit (0.5 s)" in line for line in lines) == 2


def test_a_trickled_hello_is_cut_too() -> None:
    with _serving(idle_timeout=600, max_seconds=0.3) as (srv, lines):
        assert _trickle(srv.address, p.hello(p.ECHO, 64) * 50, most=600) < 600
    assert any("ended at the session time limit" in line for line in lines)


def test_accept_failures_do_not_stop_the_server() -> None:
    # 16 descriptors: a dozen sessions exhaust them, and accept() fails with EMFILE
    srv = ServerProcess("--max-sessions", "64", max_files=16)
    conns = []
    try:
        for _ in range(20):
            c = socket.create_connection((srv.host, srv.port), timeout=60)
            c.sendall(p.hello(p.ECHO, 64))
            conns.append(c)
        assert srv.proc.stderr is not None
        line = srv.proc.stderr.readline()  # the server says so, and goes on
        assert line == ("accept failed (Too many open files); still listening\n"), line
        for c in conns:
            c.close()
        conns.clear()
        rtt = measure_rtt(srv.host, srv.port, seconds=0.1, timeout=60)
        assert rtt.samples > 0
    finally:
        for c in conns:
            c.close()
        code = srv.stop(timeout=60)
    assert code == 0


def test_the_log_of_refusals_is_bounded() -> None:
    now = [0.0]
    lines: list[str] = []
    log = RateLimitedLog(lines.append, burst=5, per_second=1.0, clock=lambda: now[0])
    srv = Server("127.0.0.1", 0, max_sessions=1, log=log)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"grace": 0.2}, daemon=True)
    thread.start()
    holder = socket.create_connection(srv.address, timeout=60)
    try:
        holder.sendall(p.hello(p.ECHO, 64))
        assert holder.recv(1) == p.OK
        for _ in range(200):  # a flood while the only slot is taken: 200 refusals
            with socket.create_connection(srv.address, timeout=60) as c:
                assert c.recv(1) == p.BUSY
        assert len(lines) == 5 and all("session limit reached" in line for line in lines)
        assert log.dropped == 195
        now[0] += 10.0  # the clock moves on: the next line says what was left out
        with socket.create_connection(srv.address, timeout=60) as c:
            assert c.recv(1) == p.BUSY
        assert lines[-1].startswith("(195 more line(s) left out: too many at once) refused")
    finally:
        holder.close()
        srv.stop()
        thread.join(60)


def test_the_rate_limit_refills() -> None:
    now = [0.0]
    lines: list[str] = []
    log = RateLimitedLog(lines.append, burst=2, per_second=0.5, clock=lambda: now[0])
    for i in range(4):
        log(f"line {i}")
    now[0] += 2.0  # one token back
    log("line 4")
    log("line 5")
    assert lines == ["line 0", "line 1", "(2 more line(s) left out: too many at once) line 4"]


def test_with_a_token_nobody_else_gets_a_byte(tmp_path: Path) -> None:
    with _serving(token=TOKEN.encode()) as (srv, lines):
        host, port = srv.address
        assert measure_rtt(host, port, seconds=0.1,
                           link=Link(host, port, token=TOKEN.encode())).samples > 0
        with pytest.raises(InputError, match="the server asks for a token: give the same "
                                             "--token-file as the server's"):
            measure_rtt(host, port, seconds=0.1)
        with pytest.raises(InputError, match="the server denied the token"):
            measure_rtt(host, port, seconds=0.1, link=Link(host, port, token=b"x" * 32))
        # a raw peer: the hello, a made-up answer, then a message that is never echoed
        with socket.create_connection((host, port), timeout=60) as c:
            c.sendall(p.hello(p.ECHO, 8))
            assert c.recv(1) == p.CHALLENGE
            c.recv(p.NONCE_BYTES, socket.MSG_WAITALL)
            c.sendall(bytes(32) + b"12345678")
            assert c.recv(1) == p.DENIED
            assert _closed(c, 60)
    assert sum("wrong token, denied" in line for line in lines) == 3  # no token counts too


def test_the_token_files_of_serve_and_probe(tmp_path: Path) -> None:
    good = tmp_path / "token"
    good.write_text(TOKEN + "\n")
    srv = ServerProcess("--token-file", str(good))
    try:
        ok = _run("probe", srv.target, "--seconds", "0.3", "--token-file", str(good))
        none = _run("probe", srv.target, "--seconds", "0.3")
    finally:
        assert srv.stop(timeout=60) == 0
    assert ok.returncode == 0, ok.stderr
    assert none.returncode == 2 and none.stderr == (
        f"gpupool netcheck: {srv.target}: the server asks for a token: give the same "
        "--token-file as the server's\n")
    short = tmp_path / "short"
    short.write_text("secret\n")
    bad = _run("serve", "--port", "0", "--token-file", str(short))
    assert bad.returncode == 2 and "secret" not in bad.stderr
    assert bad.stderr == (f"gpupool netcheck: --token-file {short}: expected a shared token of "
                          "at least 16 characters (make one with `openssl rand -hex 32`), got "
                          "6\n")


@pytest.mark.parametrize(("args", "message"), [
    (["--bind", ""], "--bind: expected a value, got an empty string"),
    (["--bind", " "], "--bind: expected a value, got an empty string"),
    (["--port", "-1"], "argument --port: expected a port from 1 to 65535"),
    (["--port", "65536"], "argument --port: expected a port from 1 to 65535"),
    (["--port", "70000"], "argument --port: expected a port from 1 to 65535 (0: any free "
                          "port), got '70000'"),
    (["--timeout", "1e300"], "argument --timeout: expected at most 3,600 s, got '1e300'"),
    (["--max-seconds", "inf"], "argument --max-seconds: expected a finite number"),
    (["--echo-delay-us", "1e12"], "argument --echo-delay-us: expected at most 1e+06 µs"),
    (["--max-sessions", "100000"], "argument --max-sessions: expected a whole number from 1 "
                                   "to 256"),
    (["--bind", "no such host"], "--bind/--port: cannot listen on no such host:0"),
])
def test_serve_refuses_what_it_cannot_do_safely(args: list[str], message: str) -> None:
    done = _run("serve", "--port", "0", *args)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_empty_bind_is_refused_by_the_server_itself() -> None:
    with pytest.raises(ValueError, match="listens on every interface"):
        Server("", 0)


# -- the probe --------------------------------------------------------------------------------


@contextlib.contextmanager
def _fake(answer: Callable[[socket.socket, int], None]) -> Iterator[int]:
    """A listener that reads each hello, says OK and then does ``answer(conn, mode)``."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=session, args=(conn,), daemon=True).start()

    def session(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.settimeout(60)
            head = conn.recv(p.HELLO.size, socket.MSG_WAITALL)
            conn.sendall(p.OK)
            answer(conn, p.HELLO.unpack(head)[2])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(60)
        listener.close()


def _trickling_echo(conn: socket.socket, mode: int) -> None:
    """Echo back a byte at a time, each well within the probe's read timeout: forever."""
    while not select.select([], [], [], 0.2)[0]:
        if conn.send(b"x") == 0:
            return


def test_the_probe_ends_at_its_deadline_whatever_the_server_trickles() -> None:
    with _fake(_trickling_echo) as port:
        done = _run("probe", f"127.0.0.1:{port}", "--seconds", "0.5", "--deadline", "2")
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"gpupool netcheck: 127.0.0.1:{port}: the probe's deadline of 2 s "
                           "(--deadline) passed during the round trips; the server is slow, "
                           "busy or not a netcheck server\n")


def test_the_deadline_bounds_every_stream() -> None:
    with _fake(_trickling_echo) as port:
        link = Link("127.0.0.1", port, deadline=Deadline(1.0, f"127.0.0.1:{port}"))
        with pytest.raises(InputError, match=r"deadline of 1 s .* passed during"):
            measure_bandwidth("127.0.0.1", port, seconds=0.2, streams=3, link=link)


def _claims_ten_times(conn: socket.socket, mode: int) -> None:
    """Echoes and sends as a server does, but claims ten times what it received."""
    if mode == p.ECHO:
        while msg := conn.recv(64, socket.MSG_WAITALL):
            conn.sendall(msg)
        return
    if mode == p.SOURCE:
        conn.sendall(bytes(4 << 20))
        return
    got = 0
    while chunk := conn.recv(1 << 20):
        got += len(chunk)
    # a count of ten times what arrived, and (as the old protocol's RESULT) a window of 1 ns
    conn.sendall(p.RESULT.pack(10 * got) + p.RESULT.pack(0) + p.RESULT.pack(1))


def test_bandwidth_never_rests_on_the_servers_word() -> None:
    with _fake(_claims_ten_times) as port:
        done = _run("probe", f"127.0.0.1:{port}", "--seconds", "0.3", "--format", "json")
    assert done.returncode == 2
    assert "the server counted" in done.stderr and "(client to server)" in done.stderr


def test_both_directions_are_timed_by_the_client(tmp_path: Path) -> None:
    srv = ServerProcess()
    try:
        done = _run("probe", srv.target, "--seconds", "0.3", "--format", "json")
    finally:
        srv.stop(timeout=60)
    assert done.returncode == 0, done.stderr
    assert '"timed_by": "server"' not in done.stdout and done.stdout.count(
        '"timed_by": "client"') == 2


@pytest.mark.parametrize(("target", "extra", "message"), [
    ("a" * 64 + ".example:9801", [], "expected an IP address or a host name (labels of 1-63"),
    ("x." * 127 + "xy:9801", [], "expected an IP address or a host name"),
    ("bad-.example:9801", [], "expected an IP address or a host name"),
    ("127.0.0.1:9801", ["--seconds", "1e300"], "argument --seconds: expected at most 3,600 s"),
    ("127.0.0.1:9801", ["--seconds", "0.5", "--deadline", "0.1"],
     "--deadline 0.1: expected at least --seconds (0.5)"),
    ("127.0.0.1:9801", ["--streams", "100000"],
     "argument --streams: expected a whole number from 1 to 64"),
])
def test_probe_refuses_targets_and_figures_before_any_traffic(target: str, extra: list[str],
                                                              message: str) -> None:
    done = _run("probe", target, *extra)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
