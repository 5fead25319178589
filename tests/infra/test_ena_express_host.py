"""Issue 16 item 18: where ENA Express is on, the host settings AWS's check requires are set.

AWS's ENA Express check (amzn/amzn-drivers scripts/check-ena-express-settings.sh) requires an MTU
of at most 8900, ``tcp_limit_output_bytes`` of at least 1 MiB and BQL disabled. The boot-script
part runs under bash (files under tmp_path, ``ip``, ``sysctl`` and ``systemctl`` stood in for, a
sysfs tree of the interface), and the unit it installs passes ``systemd-analyze verify``.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from infra.aws import ena_express
from infra.aws.remote_gpu import client_user_data


def _stub(bindir: Path, name: str, calls: Path, out: str = "") -> None:
    path = bindir / name
    path.write_text(f'#!/bin/bash\necho "{name} $*" >> {calls}\nprintf "%s" "{out}"\n')
    path.chmod(0o755)


def test_the_boot_part_applies_mtu_tcp_limit_and_bql(tmp_path: Path) -> None:
    bindir, calls = tmp_path / "bin", tmp_path / "calls"
    bindir.mkdir()
    _stub(bindir, "ip", calls, "default via 10.0.0.1 dev ens5 proto dhcp src 10.0.0.9\\n")
    _stub(bindir, "sysctl", calls)
    _stub(bindir, "systemctl", calls)
    net = tmp_path / "sys" / "class" / "net" / "ens5"
    for q in ("tx-0", "tx-1"):
        (net / "queues" / q / "byte_queue_limits").mkdir(parents=True)
        (net / "queues" / q / "byte_queue_limits" / "limit_min").write_text("0\n")
    (net / "mtu").write_text("9001\n")
    paths = {ena_express.SCRIPT: tmp_path / "gpupool-ena-express",
             ena_express.UNIT: tmp_path / "gpupool-ena-express.service",
             ena_express.SYSCTL: tmp_path / "60-gpupool-ena-express.conf"}
    part = ena_express.boot_part()
    for real, fake in paths.items():
        part = part.replace(real, str(fake))
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
           "GPUPOOL_SYSFS": str(tmp_path / "sys")}
    subprocess.run(["bash", "-n", "-c", part], check=True, timeout=60)
    subprocess.run(["bash", "-euo", "pipefail", "-c", part], env=env, check=True, timeout=60)
    assert calls.read_text().splitlines()[-2:] == [
        "systemctl daemon-reload", "systemctl enable --now gpupool-ena-express.service"]
    # the unit's command, run as systemd would on this and every later boot
    subprocess.run([str(paths[ena_express.SCRIPT])], env=env, check=True, timeout=60)
    lines = calls.read_text().splitlines()
    assert "ip link set dev ens5 mtu 8900" in lines
    assert f"sysctl -q -p {paths[ena_express.SYSCTL]}" in lines
    assert paths[ena_express.SYSCTL].read_text() == \
        "net.ipv4.tcp_limit_output_bytes = 1048576\n"
    for q in ("tx-0", "tx-1"):
        assert (net / "queues" / q / "byte_queue_limits" / "limit_min").read_text() == "max\n"


def test_an_mtu_already_small_enough_is_left_alone(tmp_path: Path) -> None:
    bindir, calls = tmp_path / "bin", tmp_path / "calls"
    bindir.mkdir()
    _stub(bindir, "ip", calls)
    _stub(bindir, "sysctl", calls)
    net = tmp_path / "sys" / "class" / "net" / "eth0"
    net.mkdir(parents=True)
    (net / "mtu").write_text("1500\n")
    script = tmp_path / "s"
    script.write_text(ena_express.settings_script(str(tmp_path / "conf")))
    script.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
           "GPUPOOL_SYSFS": str(tmp_path / "sys")}
    subprocess.run([str(script), "eth0"], env=env, check=True, timeout=60)
    assert not any(line.startswith("ip link") for line in calls.read_text().splitlines())


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="needs systemd-analyze (Debian's systemd) to verify the unit")
def test_the_ena_express_unit_is_one_systemd_accepts(tmp_path: Path) -> None:
    script = tmp_path / "gpupool-ena-express"
    script.write_text(ena_express.settings_script())
    script.chmod(0o755)
    path = tmp_path / "gpupool-ena-express.service"
    path.write_text(ena_express.unit(str(script)))
    done = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "WantedBy=multi-user.target" in path.read_text()  # every boot: MTU and BQL reset


def test_clients_with_ena_express_get_the_settings_and_others_no_script() -> None:
    assert client_user_data(False) is None
    script = base64.b64decode(client_user_data(True) or "").decode()
    assert script.startswith("#!/bin/bash\n") and ena_express.UNIT in script
    subprocess.run(["bash", "-n", "-c", script], check=True, timeout=60)
