"""Inputs a command reads whole are bounded, and every value that once gave a traceback is one
line and exit 2 (issue 16, items 12 and 13).

- ``--model-config``, ``--utilisation``, profiles and traces are regular files within a stated
  size: ``/dev/zero`` or a FIFO nobody writes to is refused at once, never read without end;
- a profile's ``trace:`` is looked for beside the profile, and a trace that is not one (any
  file a pull request's profile may name) is never echoed into the log;
- huge or odd numbers (a 400-digit ``head_dim``, ``1e308`` in a trace, ``--since
  9999999999d``; netcheck's ``--port 70000`` is in its own tests), empty values and closed
  standard streams.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import ROOT, TF_PASS, run_in_process

HEADER = ("name,kind,blocking,bytes_to_gpu,bytes_from_gpu,serialise_us,deserialise_us,"
          "process_us,gap_us,block_us\n")
PROFILE = "name: app\nlocal_time_s: 2\nsync_calls: 10\nbytes_to_gpu: 1e6\nbytes_from_gpu: 1e5\n"
LLAMA = ('{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, '
         '"num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008')


def _one_line(args: list[str]) -> str:
    run = run_in_process(args)
    assert run.code == 2, (run.code, run.out[-500:], run.err[-2000:])
    assert len(run.err_lines) == 1 and "Traceback" not in run.err, run.err
    return run.err_lines[0]


def _sparse(path: Path, size: int) -> Path:
    with path.open("wb") as f:
        f.truncate(size)  # no disk used: the size alone must refuse it
    return path


# -- item 12: regular files within a limit --------------------------------------------------


@pytest.mark.parametrize(("args", "expected"), [
    (["estimate", "--model-config", "/dev/zero"],
     "/dev/zero: expected a Hugging Face config.json as a regular file, got a character device"),
    (["check", str(TF_PASS), "--utilisation", "/dev/zero"],
     "/dev/zero: expected a utilisation snapshot as a regular file, got a character device"),
    (["remoting", "/dev/zero", "--rtt-us", "10"],
     "/dev/zero: expected a profile (YAML) as a regular file, got a character device"),
])
def test_a_device_is_refused_not_read_without_end(args: list[str], expected: str) -> None:
    assert _one_line(args).endswith(expected)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)  # nobody ever writes: a reader that opened it would wait for ever
    assert _one_line(["estimate", "--model-config", str(fifo)]).endswith(
        "config.json: expected a Hugging Face config.json as a regular file, got a named pipe "
        "(FIFO)")


@pytest.mark.parametrize(("name", "size", "args", "expected"), [
    ("config.json", 2 << 20, ["estimate", "--model-config"],
     "expected a Hugging Face config.json of at most 1 MiB, got a file of 2,097,152 bytes"),
    ("snapshot.json", 65 << 20, ["check", str(TF_PASS), "--utilisation"],
     "expected a utilisation snapshot of at most 64 MiB, got a file of 68,157,440 bytes"),
    ("profile.yaml", 2 << 20, ["remoting"],
     "expected a profile (YAML) of at most 1 MiB, got a file of 2,097,152 bytes"),
])
def test_a_file_past_its_limit_is_refused_before_it_is_read(
        tmp_path: Path, name: str, size: int, args: list[str], expected: str) -> None:
    big = _sparse(tmp_path / name, size)
    extra = ["--rtt-us", "10"] if args == ["remoting"] else []
    assert _one_line([*args, str(big), *extra]).endswith(expected)


def test_a_trace_past_its_limit_or_not_regular_is_refused(tmp_path: Path) -> None:
    _sparse(tmp_path / "big.csv", (256 << 20) + 1)
    (tmp_path / "p.yaml").write_text(PROFILE + "trace: big.csv\n")
    assert _one_line(["remoting", str(tmp_path / "p.yaml"), "--rtt-us", "10"]).endswith(
        "big.csv: expected a trace (CSV) of at most 256 MiB, got a file of 268,435,457 bytes")
    (tmp_path / "q.yaml").write_text(PROFILE + "trace: /dev/zero\n")
    assert "trace: expected an existing CSV file, got '/dev/zero'" in _one_line(
        ["remoting", str(tmp_path / "q.yaml"), "--rtt-us", "10"])


def test_a_trace_is_looked_for_beside_its_profile(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    app = tmp_path / "profiles"
    app.mkdir()
    (app / "app.csv").write_text(HEADER + "cudaMemcpy,SYNC,CPUBlocking,1e6,1e5,1,1,5,10,100\n")
    (app / "app.yaml").write_text(PROFILE + "trace: app.csv\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # not where the trace is
    run = run_in_process(["remoting", str(app / "app.yaml"), "--rtt-us", "10", "--format",
                          "json"])
    assert run.code in (0, 1), run.err
    assert '"model": "trace-replay"' in run.out


def test_a_trace_that_is_not_one_is_never_echoed(tmp_path: Path) -> None:
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key=SECRET-do-not-print,x\nSECRET-line-2\n")
    (tmp_path / "p.yaml").write_text(PROFILE + f"trace: {secret}\n")
    line = _one_line(["remoting", str(tmp_path / "p.yaml"), "--rtt-us", "10"])
    assert "SECRET" not in line
    assert line.endswith("credentials: line 1: expected a CSV header naming the columns "
                         f"{HEADER.strip()}; none of its 2 field(s) is one")


# -- item 13: no traceback, whatever the value ---------------------------------------------


def test_a_400_digit_head_dim_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(LLAMA + ', "head_dim": ' + "9" * 400 + "}")
    assert _one_line(["estimate", "--model-config", str(config)]).endswith(
        "head_dim: expected a model dimension (a whole number from 1 to 10,000,000), got a "
        "number of 400 digits")


@pytest.mark.parametrize("experts", ['"8"', "8.0", "8"])
def test_the_moe_guard_reads_every_spelling_of_a_count(tmp_path: Path, experts: str) -> None:
    config = tmp_path / "config.json"
    config.write_text(LLAMA + f', "num_local_experts": {experts}}}')
    assert _one_line(["estimate", "--model-config", str(config)]).endswith(
        "num_local_experts: a mixture-of-experts model (8 experts) is not a dense transformer; "
        "give its total parameter count with --params instead")


def test_an_unreadable_expert_count_fails_closed(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(LLAMA + ', "num_experts": "many"}')
    assert _one_line(["estimate", "--model-config", str(config)]).endswith(
        "num_experts: expected a number of experts, got 'many'")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_trace_values_of_1e308_are_one_line(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "t.csv").write_text(HEADER + "cudaMemcpy,SYNC,CPUBlocking,1e308,0,1,1,1,1,1\n")
    (tmp_path / "p.yaml").write_text(PROFILE + "trace: t.csv\n")
    line = _one_line(["remoting", str(tmp_path / "p.yaml"), "--rtt-us", "10", "--format", fmt])
    assert line.endswith("t.csv: line 2: bytes_to_gpu: expected a finite number from 0 to "
                         "1e+13, got '1e308'")


def test_profile_figures_past_any_real_run_are_refused(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("name: app\nlocal_time_s: 1e-300\nsync_calls: 10\n"
                                     "bytes_to_gpu: 1e308\nbytes_from_gpu: 0\n")
    run = run_in_process(["remoting", str(tmp_path / "p.yaml"), "--rtt-us", "10"])
    assert run.code == 2 and "Traceback" not in run.err
    assert [line.split(": ", 2)[2] for line in run.err_lines] == [
        "local_time_s: expected at least 1e-06, got '1e-300'",
        "bytes_to_gpu: expected at most 1e+18, got '1e308'"]


@pytest.mark.parametrize(("args", "expected"), [
    (["debt", "--since", "9999999999d"],
     "gpupool debt: --since 9999999999d: expected at most 455d (CloudWatch keeps metrics for "
     "455 days)"),
    (["debt", "--since", ""], "gpupool debt: --since: expected a value, got an empty string"),
    (["debt", "--region", "", "--since", "1d"],
     "gpupool debt: --region: expected a value, got an empty string"),
    (["check", ""], "gpupool check: PLAN_FILE: expected a value, got an empty string"),
    (["check", str(TF_PASS), "--config", " "],
     "gpupool check: --config: expected a value, got an empty string"),
])
def test_values_that_gave_tracebacks_or_defaults_are_one_line(args: list[str],
                                                              expected: str) -> None:
    assert _one_line(args) == expected


def _run_with_closed(fd: int, args: list[str]) -> subprocess.CompletedProcess[str]:
    # `gpupool … >&-` / `2>&-`: the descriptor is closed before the interpreter starts
    return subprocess.run(
        [sys.executable, "-c", "import os, sys, runpy\n"
         f"os.close({fd})\nsys.argv = ['gpupool', *sys.argv[1:]]\n"
         "os.execv(sys.executable, [sys.executable, '-m', 'gpupool', *sys.argv[1:]])",
         *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("args", [["validate", "dev"], ["catalog"]], ids=" ".join)
def test_a_closed_stdout_is_exit_2_not_a_traceback(args: list[str]) -> None:
    done = _run_with_closed(1, args)
    assert done.returncode == 2
    assert done.stderr == "gpupool: standard output is closed; give it a file or /dev/null " \
                          "(>/dev/null)\n"


def test_a_closed_stderr_is_exit_2_said_on_stdout() -> None:
    done = _run_with_closed(2, ["validate", "no-such-stack"])
    assert done.returncode == 2
    assert done.stdout == "gpupool: standard error is closed; give it a file or /dev/null " \
                          "(2>/dev/null)\n"
