"""Issue 16 item 15: a proxy that reboots in an orderly way is back in Cloud Map.

The boot script's discovery part runs under bash (its files written under tmp_path, ``systemctl``
stood in for), the unit it installs is checked by ``systemd-analyze verify``, and its commands run
as systemd runs them (start: every ``ExecStartPre`` then ``ExecStart``; stop: ``ExecStop``, then the
main process is stopped) with the real AWS CLI against a moto server's Cloud Map, the instance
found through IMDSv2 (a local stand-in that answers only with the session token). Start, stop (the
reboot's shutdown), start again (its boot): the proxy must be registered after each start and
deregistered after the stop.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import pytest

from infra.aws import discovery

AWS_CLI = shutil.which("aws")
pytestmark = pytest.mark.skipif(AWS_CLI is None, reason="needs the AWS CLI (aws) on PATH")
INSTANCE = "i-0abc1234def567890"
ADDRESS = "10.66.0.12"


class _Metadata(BaseHTTPRequestHandler):
    """IMDSv2: a token for a PUT, then the instance's id, address and lifecycle state."""

    def do_PUT(self) -> None:
        self._answer("token-1" if self.path == "/latest/api/token" else None)

    def do_GET(self) -> None:
        if self.headers.get("X-aws-ec2-metadata-token") != "token-1":
            self._answer(None, 401)
            return
        answers = {"instance-id": INSTANCE, "local-ipv4": ADDRESS,
                   "autoscaling/target-lifecycle-state": "InService"}
        self._answer(answers.get(self.path.removeprefix("/latest/meta-data/")))

    def _answer(self, body: str | None, code: int = 200) -> None:
        self.send_response(code if body is not None else (code if code != 200 else 404))
        self.end_headers()
        if body is not None:
            self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def imds() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Metadata)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/latest"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def service(aws_env: str) -> str:
    """A tier's Cloud Map namespace and service in the moto server (names unique per test)."""
    sd = boto3.client("servicediscovery", region_name="us-east-1")
    sd.create_private_dns_namespace(Name=f"t{uuid.uuid4().hex[:6]}.prod.gpupool.internal",
                                    Vpc="vpc-0123456789abcdef0")
    namespace = sd.list_namespaces()["Namespaces"][-1]["Id"]
    return str(sd.create_service(
        Name=discovery.SERVICE_NAME, NamespaceId=namespace,
        DnsConfig={"RoutingPolicy": "MULTIVALUE",
                   "DnsRecords": [{"Type": "A", "TTL": discovery.RECORD_TTL_SECONDS}]},
    )["Service"]["Id"])


def registered(service_id: str) -> dict[str, dict[str, str]]:
    sd = boto3.client("servicediscovery", region_name="us-east-1")
    return {i["Id"]: i.get("Attributes", {})
            for i in sd.list_instances(ServiceId=service_id)["Instances"]}


def commands(unit: str, key: str) -> list[list[str]]:
    """The command lines of one key of the unit's [Service] section, in order."""
    return [line.split("=", 1)[1].split() for line in unit.splitlines()
            if line.startswith(f"{key}=")]


class Unit:
    """The unit's commands run the way systemd runs them, one service at a time."""

    def __init__(self, text: str, env: dict[str, str]) -> None:
        self.text, self.env = text, env
        self.main: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        for argv in commands(self.text, "ExecStartPre"):
            subprocess.run(argv, env=self.env, check=True, timeout=120)
        (argv,) = commands(self.text, "ExecStart")
        self.main = subprocess.Popen(argv, env=self.env)

    def stop(self) -> None:
        for argv in commands(self.text, "ExecStop"):
            subprocess.run(argv, env=self.env, check=True, timeout=120)
        assert self.main is not None and self.main.poll() is None  # still watching until now
        self.main.send_signal(signal.SIGTERM)
        self.main.wait(timeout=30)
        self.main = None


def test_a_rebooted_proxy_registers_again(service: str, imds: str, tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    calls = tmp_path / "systemctl-calls"
    systemctl = bindir / "systemctl"
    systemctl.write_text(f'#!/bin/bash\necho "$*" >> {calls}\n')
    systemctl.chmod(0o755)
    watcher, unit_file = tmp_path / "gpupool-discovery", tmp_path / "gpupool-discovery.service"
    snippet = (discovery.register_script("us-east-1", service, 18515)
               .replace(discovery.WATCHER, str(watcher)).replace(discovery.UNIT, str(unit_file)))
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
           "GPUPOOL_IMDS": imds, "GPUPOOL_DISCOVERY_INTERVAL": "3600"}
    subprocess.run(["bash", "-euo", "pipefail", "-c", snippet], env=env, check=True, timeout=60)
    # the boot script starts the unit and enables it for every later boot
    assert calls.read_text().splitlines() == [
        "daemon-reload", "enable --now gpupool-discovery.service"]
    unit = Unit(unit_file.read_text(), env)
    try:
        unit.start()  # first boot
        assert registered(service) == {
            INSTANCE: {"AWS_INSTANCE_IPV4": ADDRESS, "AWS_INSTANCE_PORT": "18515"}}
        unit.stop()  # an orderly reboot: shutdown stops the unit
        assert registered(service) == {}
        unit.start()  # ... and the boot after it starts the unit again
        assert INSTANCE in registered(service)
    finally:
        if unit.main is not None:
            unit.main.kill()
            unit.main.wait(timeout=30)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="needs systemd-analyze (Debian's systemd) to verify the unit")
def test_the_discovery_unit_is_one_systemd_accepts(tmp_path: Path) -> None:
    watcher = tmp_path / "gpupool-discovery"
    watcher.write_text(discovery.watcher("us-east-1", "srv-0123", 18515))
    watcher.chmod(0o755)
    path = tmp_path / "gpupool-discovery.service"
    path.write_text(discovery.unit(str(watcher)))
    done = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    text = path.read_text()
    assert commands(text, "ExecStartPre") == [[str(watcher), "register"]]
    assert "WantedBy=multi-user.target" in text  # started on every boot, not once
