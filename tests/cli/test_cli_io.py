"""Where commands read and write, as a shell user wires them (issue 7, items 9 and 10):
``--output`` to devices and descriptors, ``-`` for standard input, FIFOs that never hang,
closed pipes, and ``--stack`` given more than once."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_support import ROOT, TF_PASS, TF_UPSIZE, run_in_process, run_process, write_once_read

from gpupool.output import _resolve

K8S_WORKLOADS = ROOT / "tests" / "fixtures" / "kubernetes-workloads"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("FORCE_COLOR", "CLICOLOR_FORCE", "GPUPOOL_DEBUG")}
    return env | {"PYTHONPATH": str(ROOT)} | extra


# -- --output writes through -------------------------------------------------------------


@pytest.mark.parametrize("alias", ["/dev/stdout", "/dev/fd/1", "-"])
def test_check_output_to_stdout_reaches_stdout(alias: str) -> None:
    if alias != "-":  # never let a regression replace the machine's /dev/stdout by a file
        assert _resolve(alias)[0] == 1
    run = run_process(["check", str(TF_UPSIZE), "--format", "json", "--output", alias])
    assert run.code == 1, run.err
    assert json.loads(run.out)["verdict"] == "fail"
    assert os.path.islink("/dev/stdout")


def test_plan_output_to_stdout_is_the_plan_alone() -> None:
    """The summary line moves to stderr, so `--output /dev/stdout` pipes clean JSON."""
    assert _resolve("/dev/stdout")[0] == 1
    run = run_process(["plan", "dev", "--format", "json", "--output", "/dev/stdout"])
    assert run.code == 0, run.err
    assert json.loads(run.out)["kind"] == "gpupool-plan"
    assert run.err.startswith("wrote /dev/stdout: stack dev, ")


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_check_output_to_a_device_keeps_the_device(tmp_path: Path) -> None:
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    run = run_in_process(["check", str(TF_PASS), "--format", "sarif", "--output", str(null)])
    assert run.code == 0, run.err
    assert stat.S_ISCHR(null.lstat().st_mode)


def test_check_output_into_a_fifo_reaches_its_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    run = run_in_process(["check", str(TF_PASS), "--format", "json", "--output", str(fifo)])
    reader.join()  # the check closed the FIFO before it returned: the reader is at its end
    assert run.code == 0, run.err
    assert json.loads(got[0])["verdict"] == "pass"
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


# -- closed pipes ---------------------------------------------------------------------------


def _closed_pipe(args: list[str]) -> tuple[int, str]:
    """Run with stdout a pipe whose reader is gone before anything is written (`| head -1`
    once it has its line)."""
    r, w = os.pipe()
    p = subprocess.Popen([sys.executable, "-m", "gpupool", *args], cwd=ROOT, env=_env(),
                         stdout=w, stderr=subprocess.PIPE, text=True)
    os.close(w)
    os.close(r)
    _, err = p.communicate(timeout=120)
    return p.returncode, err


@pytest.mark.parametrize("args", [["catalog"], ["plan", "dev"]], ids=" ".join)
def test_a_closed_pipe_is_not_a_failure(args: list[str]) -> None:
    code, err = _closed_pipe(args)
    assert (code, err) == (0, "")


def test_check_keeps_its_verdict_on_a_closed_pipe() -> None:
    assert _closed_pipe(["check", str(TF_UPSIZE)]) == (1, "")


def test_the_script_leaves_fast_with_everything_written(tmp_path: Path) -> None:
    """The console script skips the interpreter's teardown (gpupool.cli.script): the report it
    wrote to a pipe and to a file is whole, and the exit code is the verdict's."""
    out = tmp_path / "report.md"
    p = subprocess.run([sys.executable, "-m", "gpupool", "check", str(K8S_WORKLOADS),
                        "--format", "json", "--format", f"markdown={out}"], cwd=ROOT, env=_env(),
                       capture_output=True, timeout=120)
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)  # all of it: flushed before the fast exit
    assert doc["summary"]["kubernetes"]["gpu_objects_judged"] == 20
    markdown = out.read_text()
    assert "Kubernetes: 20 GPU objects judged" in markdown and markdown.endswith("\n")


# -- standard input and FIFOs ---------------------------------------------------------------


def test_dash_reads_the_plan_from_standard_input() -> None:
    p = subprocess.run([sys.executable, "-m", "gpupool", "check", "-", "--format", "json"],
                       cwd=ROOT, env=_env(), input=TF_UPSIZE.read_bytes(), capture_output=True,
                       timeout=120)
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    assert doc["summary"]["sources"] == ["<stdin>"] and doc["summary"]["mandatory"] == 5


def test_dash_twice_is_refused() -> None:
    run = run_in_process(["check", "-", "-"])
    assert run.code == 2 and run.err_lines == [
        "gpupool check: -: standard input can be read only once; give it as one PLAN_FILE"]


def test_a_fifo_plan_is_read_once_its_writer_comes(tmp_path: Path) -> None:
    fifo = tmp_path / "plan.fifo"
    os.mkfifo(fifo)

    writer = write_once_read(fifo, TF_UPSIZE.read_bytes())  # the check is already waiting
    run = run_in_process(["check", str(fifo), "--format", "json"])
    writer.join()
    assert run.code == 1, run.err
    assert json.loads(run.out)["summary"]["mandatory"] == 5


HELM_CHART = ROOT / "tests" / "fixtures" / "kubernetes" / "helm-template-llm-chart.yaml"


def _findings(doc: dict) -> list[tuple[str, str, str]]:
    return sorted((v["policy"], v["resource"], v["enforcement"]) for v in doc["violations"])


def test_dash_reads_kubernetes_manifests_from_standard_input() -> None:
    # `helm template … | gpupool check -`: YAML, told apart from a JSON plan by its content
    by_path = run_in_process(["check", str(HELM_CHART), "--format", "json"])
    p = subprocess.run([sys.executable, "-m", "gpupool", "check", "-", "--format", "json"],
                       cwd=ROOT, env=_env(), input=HELM_CHART.read_bytes(), capture_output=True,
                       timeout=120)
    assert p.returncode == by_path.code == 1, p.stderr
    doc = json.loads(p.stdout)
    assert doc["summary"]["sources"] == ["<stdin>"]
    assert doc["summary"]["resources_evaluated"] == 5
    assert _findings(doc) == _findings(json.loads(by_path.out)) == [
        ("k8s-gpu-per-container", "Deployment/llm/llm-serving", "mandatory"),
        ("k8s-gpu-workload-autoscaled", "Deployment/llm/llm-serving", "mandatory")]
    # findings point at the line of the stream the object started on
    assert {v["source"] for v in doc["violations"]} == {"<stdin>:50"}


def test_a_fifo_of_manifests_is_read_once_its_writer_comes(tmp_path: Path) -> None:
    fifo = tmp_path / "manifests.fifo"  # as `gpupool check <(helm template …)` hands it over
    os.mkfifo(fifo)

    writer = write_once_read(fifo, HELM_CHART.read_bytes())  # the check is already waiting
    run = run_in_process(["check", str(fifo), "--format", "json"])
    writer.join()
    assert run.code == 1, run.err
    doc = json.loads(run.out)
    assert doc["summary"]["sources"] == [str(fifo)]
    assert [v["policy"] for v in doc["violations"]] == [
        "k8s-gpu-per-container", "k8s-gpu-workload-autoscaled"]


def test_manifests_from_standard_input_join_those_of_files(tmp_path: Path) -> None:
    # a GPU Deployment on stdin, its namespace's quota in a file: one plan, as `kubectl apply`
    quota = tmp_path / "quota.yaml"
    quota.write_text("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: gpu, namespace: "
                     "vision}\nspec: {hard: {requests.nvidia.com/gpu: '4'}}\n")
    deployment = (b'{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", '
                  b'"namespace": "vision"}, "spec": {"activeDeadlineSeconds": 3600, "template": {'
                  b'"spec": {"restartPolicy": '
                  b'"Never", "containers": [{"name": "t", "image": "trainer:1.0", "resources": '
                  b'{"limits": {"nvidia.com/gpu": 1}}}]}}}}')  # kubectl get -o json
    p = subprocess.run([sys.executable, "-m", "gpupool", "check", "-", str(quota), "--format",
                        "json"], cwd=ROOT, env=_env(), input=deployment, capture_output=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["summary"]["resources_evaluated"] == 2 and doc["violations"] == []
    # without the quota file the namespace's quota cannot be verified: never a silent pass
    p = subprocess.run([sys.executable, "-m", "gpupool", "check", "-", "--format", "json"],
                       cwd=ROOT, env=_env(), input=deployment, capture_output=True, timeout=120)
    assert [v["policy"] for v in json.loads(p.stdout)["violations"]] == [
        "k8s-gpu-namespace-quota"]


@pytest.mark.parametrize(("data", "message"), [
    (b"services:\n  web:\n    image: nginx\n",
     "<stdin>: document 1 (line 1): apiVersion: expected a Kubernetes object"),
    (b"a: [1, 2\n", "<stdin>: expected valid YAML"),
    (b"kind: Pod\n\xff\n", "<stdin>: expected UTF-8 text (byte 10 is not)"),
    (b"", "<stdin>: expected a JSON plan, got an empty file"),
    (b"{\"resource_changes\": [", "<stdin>: expected valid JSON"),
])
def test_bad_standard_input_is_one_line(data: bytes, message: str) -> None:
    p = subprocess.run([sys.executable, "-m", "gpupool", "check", "-"], cwd=ROOT, env=_env(),
                       input=data, capture_output=True, text=False, timeout=120)
    err = p.stderr.decode()
    assert p.returncode == 2 and len(err.splitlines()) == 1, err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("option", ["plan", "--waivers", "--config"])
def test_a_fifo_nobody_writes_to_fails_in_time(option: str, tmp_path: Path) -> None:
    fifo = tmp_path / "input.fifo"
    os.mkfifo(fifo)
    args = ["check", str(fifo)] if option == "plan" else ["check", str(TF_PASS), option, str(fifo)]
    # it ends by itself (the message names the 0.5 s it waited); timeout= is only the guard
    # against a hang, far beyond what any machine needs
    p = subprocess.run([sys.executable, "-m", "gpupool", *args], cwd=ROOT,
                       env=_env(GPUPOOL_FIFO_TIMEOUT="0.5"), capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2
    assert p.stderr == (f"gpupool check: {fifo}: is a named pipe (FIFO) and no process wrote to "
                        "it within 0.5 s; start the writer first, or set GPUPOOL_FIFO_TIMEOUT\n")


# -- several stacks ----------------------------------------------------------------------


def test_every_stack_given_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    run = run_in_process(["check", "--stack", "dev", "--stack", "staging", "--format", "json"])
    assert run.code == 0, run.err
    assert json.loads(run.out)["summary"]["sources"] == [
        "stack dev (working tree)", "stack staging (working tree)"]
