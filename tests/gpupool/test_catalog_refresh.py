"""``gpupool catalog refresh`` against a moto server over HTTP (boto3, ``AWS_ENDPOINT_URL``).

The regenerated file must equal the bundled one apart from its timestamp: the shipped catalog
provably comes from DescribeInstanceTypes plus the recorded price list, not from a hand edit.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from gpupool.catalog.refresh import bundled_data_path
from gpupool.cli import main


def _without_timestamp(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "generated_at"}


def test_refresh_from_moto_reproduces_the_bundled_file(
    aws_env: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "catalog.json"
    assert main(["catalog", "refresh", "--output", str(out)]) == 0
    stdout, _ = capsys.readouterr()
    new = json.loads(out.read_text())
    bundled = json.loads(bundled_data_path().read_text())
    assert _without_timestamp(new) == _without_timestamp(bundled)
    assert new["source"]["endpoint"].startswith("a moto server")
    assert aws_env.rsplit(":", 1)[1] not in json.dumps(new["source"])  # no random port recorded
    assert f"wrote {len(new['types'])} GPU instance types to {out}" in stdout
    assert "T4 (7)" in stdout and "A10G (" in stdout
    assert "no recorded price for" in stdout


def test_without_output_it_writes_to_the_current_directory_not_the_package(
    aws_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An installed package is not the user's to edit (and rarely writable): the refresh lands
    in the working directory, for review, and the bundled catalog stays as shipped."""
    bundled = bundled_data_path()
    before = (bundled.read_bytes(), bundled.stat().st_mtime_ns)
    monkeypatch.chdir(tmp_path)
    assert main(["catalog", "refresh"]) == 0
    assert (bundled.read_bytes(), bundled.stat().st_mtime_ns) == before
    written = tmp_path / "gpu-instance-types.json"
    assert json.loads(written.read_text())["types"]
    assert f"to {written} " in capsys.readouterr().out


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_endpoint_exits_2_with_one_line(
    aws_env: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    out = tmp_path / "catalog.json"
    assert main(["catalog", "refresh", "--output", str(out)]) == 2
    stdout, stderr = capsys.readouterr()
    assert stdout == "" and not out.exists()
    assert len(stderr.splitlines()) == 1
    assert stderr.startswith(f"gpupool catalog: {endpoint}: expected a reachable EC2 endpoint")


def test_no_credentials_exits_2_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # never ask 169.254.169.254
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_closed_port()}")
    assert main(["catalog", "refresh", "--output", str(tmp_path / "c.json")]) == 2
    _, stderr = capsys.readouterr()
    assert stderr.splitlines() == [
        "gpupool catalog: AWS credentials: expected credentials for DescribeInstanceTypes "
        "(AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or an instance role)"
    ]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "line 1: expected JSON"),
        ('{"source": "x", "generated_at": "2026-01-01", "region": "us-east-1", "prices": []}',
         "prices: expected a mapping of instance type"),
        ('{"source": "x", "generated_at": "2026-01-01", "region": "us-east-1",'
         ' "prices": {"g4dn.xlarge": 0}}',
         "prices.g4dn.xlarge: expected a positive number"),
    ],
)
def test_bad_price_list_exits_2_naming_the_key(
    aws_env: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str,
    expected: str,
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(content)
    out = tmp_path / "c.json"
    code = main(["catalog", "refresh", "--output", str(out), "--prices", str(prices)])
    _, stderr = capsys.readouterr()
    assert code == 2
    assert stderr.splitlines() == [stderr.rstrip("\n")]
    assert stderr.startswith(f"gpupool catalog: {prices}: {expected}")


def test_region_without_recorded_prices_exits_2(
    aws_env: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["catalog", "refresh", "--output", str(tmp_path / "c.json"), "--region",
                 "ap-southeast-4"])  # a commercial region that sells no GPU type
    _, stderr = capsys.readouterr()
    assert code == 2
    assert "regions: expected prices for ap-southeast-4 (recorded: af-south-1" in stderr


def test_single_region_price_list_for_another_region_exits_2(
    aws_env: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text('{"source": "x", "generated_at": "2026-01-01", "region": "us-east-1",'
                      ' "prices": {"g4dn.xlarge": 0.526}}')
    code = main(["catalog", "refresh", "--output", str(tmp_path / "c.json"), "--region",
                 "eu-west-1", "--prices", str(prices)])
    _, stderr = capsys.readouterr()
    assert code == 2
    assert "region: expected prices for eu-west-1 (the list is for us-east-1" in stderr


def test_refresh_for_another_region_prices_it_from_the_table(
    aws_env: str, tmp_path: Path
) -> None:
    out = tmp_path / "catalog.json"
    assert main(["catalog", "refresh", "--output", str(out), "--region", "eu-west-1"]) == 0
    doc = json.loads(out.read_text())
    rows = {t["instance_type"]: t for t in doc["types"]}
    assert doc["price_region"] == "eu-west-1"
    assert rows["g4dn.xlarge"]["price_per_hour"] == 0.587
    assert rows["g6.xlarge"]["price_per_hour"] is None  # not sold there: unknown, never zero


def test_supplement_fills_only_types_the_endpoint_lacks() -> None:
    """Rows the endpoint returns win: a refresh against real EC2 that lists p3 replaces the
    recorded supplement row with the API's."""
    from gpupool.catalog.refresh import build_document, load_prices, load_supplement

    supplement = load_supplement()
    api_p3 = json.loads(json.dumps(next(
        t for t in supplement["instance_types"] if t["InstanceType"] == "p3.2xlarge")))
    api_p3["VCpuInfo"]["DefaultVCpus"] = 9  # as if the API said otherwise
    doc = build_document([api_p3], load_prices(None, "us-east-1"), region="us-east-1",
                         endpoint="AWS EC2 API", supplement=supplement)
    rows = {t["instance_type"]: t for t in doc["types"]}
    assert rows["p3.2xlarge"]["vcpus"] == 9
    assert rows["p3.16xlarge"]["vcpus"] == 64 and rows["g4ad.xlarge"]["gpu_maker"] == "AMD"
    assert "p3.2xlarge" not in doc["source"]["supplement"]
    assert "p3.16xlarge" in doc["source"]["supplement"]
    assert doc["gpu_families_without_rows"]["p2"].startswith("NVIDIA K80")


def test_every_supplement_row_names_sources_that_are_recorded() -> None:
    from gpupool.catalog.refresh import load_supplement

    supplement = load_supplement()
    for row in supplement["instance_types"]:
        assert row["Sources"], row["InstanceType"]
        for key in row["Sources"]:
            src = supplement["sources"][key]
            assert src["url"].startswith("https://") and src["date"][:4] in ("2023", "2026")


def test_endpoint_that_is_not_ec2_exits_2_with_one_line(
    aws_env: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A wrong AWS_ENDPOINT_URL (some other web server) is bad input, not a crash."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class NotEc2(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = b"<html>hello</html>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), NotEc2)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        code = main(["catalog", "refresh", "--output", str(tmp_path / "c.json")])
    finally:
        server.shutdown()
    _, stderr = capsys.readouterr()
    assert code == 2
    assert stderr.splitlines() == [
        f"gpupool catalog: {endpoint}: expected an EC2 API endpoint, but its answer is not "
        "EC2's XML"
    ]
