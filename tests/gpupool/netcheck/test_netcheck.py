"""``gpupool netcheck``: the probe's figures on loopback and between namespaces, the server's
bounds, the verdict with a profile, and CloudWatch through a moto server."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import threading
import time

import pytest
from netcheck_support import ROOT, ServerProcess, gpupool_cmd, limit_rate

from gpupool.errors import InputError
from gpupool.netcheck import protocol as p
from gpupool.netcheck.link import parse_target
from gpupool.netcheck.probe import (
    FROM_SERVER,
    measure_bandwidth,
    measure_reverse_bandwidth,
    measure_rtt,
)
from gpupool.netcheck.server import Server

RESNET = ROOT / "examples" / "profiles" / "resnet50-inference.yaml"
BERT = ROOT / "examples" / "profiles" / "bert-inference.yaml"


def probe_json(*args: str, netns: str | None = None, env: dict | None = None
               ) -> tuple[int, dict, str]:
    cmd = gpupool_cmd("netcheck", "probe", *args, "--format", "json")
    if netns:
        cmd = ["ip", "netns", "exec", netns, *cmd]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    return proc.returncode, (json.loads(proc.stdout) if proc.stdout else {}), proc.stderr


def test_loopback_round_trips_and_bandwidth(server: Server) -> None:
    host, port = server.address
    rtt = measure_rtt(host, port, seconds=0.3)
    assert rtt.samples > 100
    assert 0 < rtt.min <= rtt.p50 <= rtt.p99 <= rtt.max
    bw = measure_bandwidth(host, port, seconds=0.3, streams=2)
    assert bw.gbps > 0.1 and bw.streams == 2 and bw.bytes > 0
    back = measure_reverse_bandwidth(host, port, seconds=0.3, streams=2)
    assert back.gbps > 0.1 and back.streams == 2 and back.bytes > 0
    assert back.direction == FROM_SERVER and back.seconds > 0
    # how closely the clocks span the time asked depends on the machine's load: bench/ measures


def test_a_known_echo_delay_shows_in_every_round_trip() -> None:
    delayed = ServerProcess("--echo-delay-us", "1500")
    try:
        slow = measure_rtt(delayed.host, delayed.port, seconds=0.6, timeout=60)
    finally:
        delayed.stop(timeout=60)  # guards a hang only: a loaded machine is slow to exit
    # every round trip waits for the delay (the server times it on its own clock), so none can
    # beat it; nothing is said of the upper side, which a busy machine stretches at will (how
    # closely the median moves by the delay is measured in bench/remoting_bench.py --only probe)
    assert slow.samples > 10 and slow.min >= 1500


def test_sigterm_stops_the_server_cleanly() -> None:
    srv = ServerProcess()
    conn = socket.create_connection((srv.host, srv.port), timeout=2)
    conn.sendall(p.hello(p.ECHO, 64))
    assert conn.recv(1) == p.OK
    code = srv.stop(timeout=60)  # a guard against a hang: the server's grace is 2 s
    assert code == 0
    assert "stopped" in srv.proc.stdout.read()
    conn.settimeout(60)
    with contextlib.suppress(ConnectionResetError):
        assert conn.recv(64) == b""  # the open session was cut, not left behind
    conn.close()


def test_the_session_limit_refuses_the_next_client() -> None:
    ended = threading.Event()

    def log(line: str) -> None:
        if "echo, 0 messages" in line:
            ended.set()

    srv = Server("127.0.0.1", 0, max_sessions=1, log=log)
    t = threading.Thread(target=srv.serve_forever, kwargs={"grace": 0.2}, daemon=True)
    t.start()
    host, port = srv.address
    # every timeout here only ends a hang: the order is made by events (OK read, the log line)
    holder = socket.create_connection((host, port), timeout=60)
    holder.sendall(p.hello(p.ECHO, 64))
    assert holder.recv(1) == p.OK
    with pytest.raises(InputError, match="session limit"):
        measure_rtt(host, port, seconds=0.1, timeout=60)
    holder.close()
    assert ended.wait(60)  # the holder's session ended (logged as it frees its slot)
    assert measure_rtt(host, port, seconds=0.1, timeout=60).samples > 0
    srv.stop()
    t.join(60)


@pytest.mark.parametrize(("junk", "status"), [
    (b"GET / HTTP/1.1\r\n\r\n", p.BAD), (p.hello(p.ECHO, 10**6), p.BAD), (p.hello(9, 0), p.BAD),
    (b"GPNC\x07\x01\x00\x00\x00\x00\x00\x40", p.OTHER_VERSION),
    (b"GPNC\x01\x01\x00\x00\x00\x00\x00\x40", p.OTHER_VERSION)])  # version 1: the old probe
def test_anything_but_a_hello_is_refused(server: Server, junk: bytes, status: bytes) -> None:
    conn = socket.create_connection(server.address, timeout=60)
    conn.sendall(junk)
    assert conn.recv(1) == status
    with contextlib.suppress(ConnectionResetError):  # closed: an end, or a reset (bytes unread)
        assert conn.recv(1) == b""
    conn.close()


def test_idle_and_long_sessions_are_cut() -> None:
    srv = Server("127.0.0.1", 0, idle_timeout=0.3, max_seconds=0.5, log=lambda line: None)
    t = threading.Thread(target=srv.serve_forever, kwargs={"grace": 0.2}, daemon=True)
    t.start()
    # the clients' own timeouts only guard against a hang: the server ends both sessions
    idle = socket.create_connection(srv.address, timeout=60)
    assert idle.recv(1) == b""  # said nothing: closed after the read timeout
    busy = socket.create_connection(srv.address, timeout=60)
    busy.sendall(p.hello(p.ECHO, 8))
    assert busy.recv(1) == p.OK
    echoed = 0
    with contextlib.suppress(OSError):  # echoes stop at the session's time limit
        while True:  # (a server that never stopped would hang here: pytest's timeout fails it)
            busy.sendall(b"12345678")
            if busy.recv(8, socket.MSG_WAITALL) == b"":
                break
            echoed += 1
    assert echoed > 0  # it answered, then it stopped: cut however eager the client
    srv.stop()
    t.join(60)
    assert not t.is_alive()


def test_probe_json_with_a_profile_judges_the_budget(server: Server) -> None:
    host, port = server.address
    code, r, err = probe_json(f"{host}:{port}", "--seconds", "0.6", "--profile", str(RESNET),
                              "--max-overhead", "1000", "--latency", "pipelined")
    assert code == 0, err
    assert {"rtt_us", "bandwidth_gbps", "predicted_overhead", "verdict"} <= r.keys()
    assert {"p50", "p99"} <= r["rtt_us"].keys() and r["verdict"] == "pass"
    assert r["model"] == "trace-replay" and r["profile"] == "resnet50-inference"
    assert 0 < r["predicted_overhead"] <= r["predicted_overhead_at_p99"]
    # the replay at the figures the probe measured, each direction at its own bandwidth
    from gpupool.remoting import load_profile, replay
    from gpupool.remoting.trace import load_trace

    up = r["bandwidth"]["client_to_server"]["gbps"]
    down = r["bandwidth"]["server_to_client"]["gbps"]
    assert r["bandwidth_gbps"] == min(up, down)
    trace = load_trace(load_profile(RESNET).trace)
    same = replay.overhead(trace, replay.Network(r["rtt_us"]["p50"], up, down))
    assert same == pytest.approx(r["predicted_overhead"]) and r["latency"] == "pipelined"
    assert {d["measured_gbps"] for d in r["directions"].values()} == {up, down}
    code, r, _ = probe_json(f"{host}:{port}", "--seconds", "0.3", "--profile", str(BERT))
    assert code == 1 and r["verdict"] == "fail" and r["model"] == "first-order"
    # 12,000 sync calls at the median RTT, 1.2 GB to the GPU at the client → server
    # bandwidth and 0.3 GB back at the server → client one, over 2 s; serialised latency (the
    # default) adds what 80,000 async calls x RTT/2 on the link run past the 2 s local run
    up = r["bandwidth"]["client_to_server"]["gbps"]
    down = r["bandwidth"]["server_to_client"]["gbps"]
    rtt = r["rtt_us"]["p50"]
    expected = (12000 * rtt * 1e-6 + 9.6e9 / (up * 1e9) + 2.4e9 / (down * 1e9)
                + max(0.0, 80000 * rtt / 2 * 1e-6 - 2.0)) / 2
    assert r["latency"] == "serialised" and r["predicted_overhead"] == pytest.approx(expected)


@pytest.mark.parametrize(("args", "message"), [
    (["localhost"], "expected a host and a port"),
    (["127.0.0.1:1"], "127.0.0.1:1: cannot connect"),
    (["127.0.0.1:1", "--profile", "missing.yaml"], "missing.yaml: no such file"),
    (["127.0.0.1:1", "--message-bytes", "70000"], "--message-bytes: expected at most 65536"),
    (["127.0.0.1:1", "--cloudwatch", "--dimension", "nope"], "--dimension: expected Name=Value"),
])
def test_probe_bad_input_is_one_line(args: list[str], message: str) -> None:
    proc = subprocess.run(gpupool_cmd("netcheck", "probe", *args), cwd=ROOT,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_parse_target_takes_ipv6() -> None:
    assert parse_target("[::1]:9801") == ("::1", 9801)
    assert parse_target("proxy.internal:80") == ("proxy.internal", 80)
    with pytest.raises(InputError):
        parse_target("10.0.0.1:99999")


def test_cloudwatch_gets_the_figures(server: Server, aws_env: str) -> None:
    import os

    import boto3

    host, port = server.address
    code, r, err = probe_json(f"{host}:{port}", "--seconds", "0.4", "--cloudwatch",
                              "--dimension", "AutoScalingGroupName=proxies",
                              env=dict(os.environ))
    assert code == 0, err
    assert r["cloudwatch"] == {"namespace": "GPUPool/Netcheck", "metrics": 6}
    cw = boto3.client("cloudwatch", region_name="us-east-1")
    dims = [{"Name": "Target", "Value": f"{host}:{port}"},
            {"Name": "AutoScalingGroupName", "Value": "proxies"}]
    names = {m["MetricName"] for m in cw.list_metrics(Namespace="GPUPool/Netcheck")["Metrics"]
             if m["Dimensions"] == dims}
    assert names == {"RttP50", "RttP99", "RttMax", "Bandwidth", "BandwidthToServer",
                     "BandwidthFromServer"}
    stats = cw.get_metric_statistics(
        Namespace="GPUPool/Netcheck", MetricName="RttP50", Dimensions=dims,
        StartTime=time.time() - 600, EndTime=time.time() + 600, Period=60,
        Statistics=["Maximum"])
    assert stats["Datapoints"][0]["Maximum"] == pytest.approx(r["rtt_us"]["p50"])
    assert stats["Datapoints"][0]["Unit"] == "Microseconds"


# ----------------------------------------------------------------- between two namespaces


# How close the probe comes to a shaper's rate is a figure of the machine's load (a descheduled
# reader stalls its window): bench/remoting_bench.py --only probe measures it (94-96 % of the
# limit). The tests hold what cannot move with the load: no reading above the shaper (the
# client's clock spans every byte's passage through it), none far below it, and verdicts with
# margins wider than any load makes.
SLACK = 1.15  # above the limit: tbf's burst (4 ms worth) over a window of a few hundred ms
FLOOR = 1 / 3  # below it: a reader that gets a third of a core still fills these rates


@pytest.mark.parametrize("mbit", [100, 400])
def test_bandwidth_between_namespaces_is_the_shapers(netns_pair, mbit: int) -> None:
    limit_rate(netns_pair, mbit)
    srv = ServerProcess(netns=netns_pair.server, bind=netns_pair.server_ip)
    try:
        code, r, err = probe_json(srv.target, "--seconds", "1.5", netns=netns_pair.client)
    finally:
        assert srv.stop() == 0
    assert code == 0, err
    up = r["bandwidth"]["client_to_server"]
    assert FLOOR * mbit / 1000 < up["gbps"] <= SLACK * mbit / 1000
    assert up["timed_by"] == "client" and r["bandwidth"]["server_to_client"]["timed_by"] == \
        "client"
    assert r["bandwidth_gbps"] == up["gbps"]  # the other way is not shaped: faster
    assert r["rtt_us"]["samples"] > 100 and r["rtt_us"]["p50"] > 0


def test_each_direction_measured_and_judged_against_its_own_bytes(netns_pair, tmp_path) -> None:
    # 100 Mbit/s client → server (bytes_to_gpu), 10 Mbit/s server → client (bytes_from_gpu)
    limit_rate(netns_pair, 100, side="client")
    limit_rate(netns_pair, 10, side="server")
    # 5 s local run, 5 % budget = 250 ms; 10 sync calls (round trips well under 1 ms in all)
    heavy_to = tmp_path / "heavy-to.yaml"
    heavy_to.write_text("name: heavy-to\nlocal_time_s: 5.0\nsync_calls: 10\n"
                        "bytes_to_gpu: 6.25e5\nbytes_from_gpu: 6.25e4\n")
    heavy_back = tmp_path / "heavy-back.yaml"  # the same bytes, the other way round
    heavy_back.write_text("name: heavy-back\nlocal_time_s: 5.0\nsync_calls: 10\n"
                          "bytes_to_gpu: 6.25e4\nbytes_from_gpu: 6.25e5\n")
    srv = ServerProcess(netns=netns_pair.server, bind=netns_pair.server_ip)
    try:
        code, r, err = probe_json(srv.target, "--seconds", "2.5", "--profile", str(heavy_to),
                                  netns=netns_pair.client)
        code2, r2, err2 = probe_json(srv.target, "--seconds", "2.5", "--profile",
                                     str(heavy_back), netns=netns_pair.client)
    finally:
        assert srv.stop() == 0
    for res in (r, r2):
        up = res["bandwidth"]["client_to_server"]["gbps"]
        down = res["bandwidth"]["server_to_client"]["gbps"]
        assert FLOOR * 0.1 < up <= SLACK * 0.1 and FLOOR * 0.01 < down <= SLACK * 0.01
        assert res["bandwidth_gbps"] == down
    # 0.625 MB out at 100 Mbit/s (50 ms) + 62.5 kB back at 10 Mbit/s (50 ms): within 250 ms
    # even at 40 % of those rates. Judged at the lower direction for both it would fail
    # (0.6875 MB at 10 Mbit/s: 550 ms).
    assert code == 0 and r["verdict"] == "pass", err
    assert r["directions"]["to_gpu"]["meets"] and r["directions"]["from_gpu"]["meets"]
    assert r["predicted_overhead"] < 0.05
    # mirrored: 62.5 kB out (5 ms) + 0.625 MB back (at least 435 ms, the shaper's ceiling
    # being 10 Mbit/s plus its burst): the way back fails the budget, and the way out has
    # nothing left whatever its bandwidth
    assert code2 == 1 and r2["verdict"] == "fail", err2
    back = r2["directions"]["from_gpu"]
    assert back["meets"] is False
    assert back["min_gbps"] == pytest.approx(8 * 6.25e5 / (0.25 - 8 * 6.25e4 / (
        r2["bandwidth"]["client_to_server"]["gbps"] * 1e9) - 10 * r2["rtt_us"]["p50"] * 1e-6)
        / 1e9)
    assert r2["directions"]["to_gpu"]["min_gbps"] is None
    # what the verdict charges: each direction's bytes at its own measured bandwidth
    for res, to_b, from_b in ((r, 6.25e5, 6.25e4), (r2, 6.25e4, 6.25e5)):
        up = res["bandwidth"]["client_to_server"]["gbps"] * 1e9
        down = res["bandwidth"]["server_to_client"]["gbps"] * 1e9
        expected = (10 * res["rtt_us"]["p50"] * 1e-6 + 8 * to_b / up + 8 * from_b / down) / 5
        assert res["predicted_overhead"] == pytest.approx(expected)


def test_namespaces_are_isolated_from_the_host(netns_pair) -> None:
    # the server in the namespace is not reachable from the host's network stack
    srv = ServerProcess(netns=netns_pair.server, bind=netns_pair.server_ip)
    try:
        with pytest.raises(OSError):
            socket.create_connection((netns_pair.server_ip, srv.port), timeout=0.5)
    finally:
        srv.stop()




@contextlib.contextmanager
def _answering(status: bytes):
    """A listener that reads each hello, answers ``status`` and hangs up: a server that fails
    every stream mid-transfer (OK) or is not a netcheck server at all (anything else)."""
    hello = len(p.hello(p.SINK, 0))
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    conn.recv(hello, socket.MSG_WAITALL)
                    conn.sendall(status)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        listener.close()


def test_a_stream_that_fails_is_one_line_naming_the_direction() -> None:
    failed = r"^127\.0\.0\.1:\d+: bulk transfer failed \("
    with _answering(p.OK) as port, pytest.raises(InputError, match=failed):
        measure_bandwidth("127.0.0.1", port, seconds=0.3, streams=2, timeout=2)


def test_a_streams_own_refusal_is_said_as_it_is() -> None:
    refused = "expected a gpupool netcheck server"
    with _answering(b"?") as port, pytest.raises(InputError, match=refused) as e:
        measure_reverse_bandwidth("127.0.0.1", port, seconds=0.3, streams=2, timeout=2)
    assert "bulk transfer" not in str(e.value)
