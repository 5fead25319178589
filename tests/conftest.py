"""Shared test fixtures."""

from __future__ import annotations

import enum
import importlib.util
import json
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# `make test` is reproducible: property tests draw the same examples every run, so a red CI is
# a real regression, never a dice roll. `make fuzz` explores with fresh seeds and more examples.
# Property tests name a count of their own only to ask for FEWER (slow examples); the others
# take the profile's: 100 in `make test`, 2000 in `make fuzz`. No deadline: Hypothesis's
# default fails an example that takes over 200 ms of WALL time, which a loaded machine makes
# of any example (tests that care about speed bound CPU time themselves). For the same reason
# no too_slow health check (it times the drawing of data on the wall clock); a test giving its
# own suppress_health_check list replaces this one, so it names too_slow too (the timing lint).
settings.register_profile("repeatable", derandomize=True, max_examples=100, print_blob=True,
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz", derandomize=False, max_examples=2000, print_blob=True,
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("GPUPOOL_HYPOTHESIS_PROFILE", "repeatable"))

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture
def bench_plan(tmp_path: Path) -> Callable[[str, int], Path]:
    """``bench_plan(generator, n)``: the bench's fleet of ``n`` resources (``bench/gen_preview.py``
    or ``bench/gen_tfplan.py``, by module name) written to a temporary plan file."""
    def write(generator: str, n: int) -> Path:
        spec = importlib.util.spec_from_file_location(generator, ROOT / "bench" / f"{generator}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        path = tmp_path / f"{generator}-{n}.json"
        path.write_text(json.dumps(module.generate(n)))
        return path

    return write


@contextmanager
def _enum_reads() -> Iterator[Counter[str]]:
    real = type.__getattribute__
    reads: Counter[str] = Counter()

    def counted(cls: type, name: str) -> Any:
        found = real(cls, name)
        if isinstance(found, enum.Enum) and type(found) is cls:
            reads[name] += 1
        return found

    enum.EnumType.__getattribute__ = counted  # type: ignore[method-assign,assignment]
    try:
        yield reads
    finally:
        del enum.EnumType.__getattribute__  # type: ignore[misc]


@pytest.fixture
def enum_reads() -> Callable[[], AbstractContextManager[Counter[str]]]:
    """``with enum_reads() as reads:`` counts, by member name, the enum members read through
    their class meanwhile (``ChangeKind.DELETE``): on Python 3.11 each read is a Python-level
    call (``EnumType`` defines ``__getattr__``), ~10x reading a global, so the per-resource
    paths bind them as module constants and the work tests hold them to it."""
    return _enum_reads


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """A moto server on 127.0.0.1 (real HTTP), the way boto3 users point at an endpoint."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def aws_env(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Environment that sends every boto3 client to the moto server, with fake credentials."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    assert os.environ["AWS_ENDPOINT_URL"] == moto_endpoint
    return moto_endpoint


@pytest.fixture
def moto(aws_env: str) -> str:
    """The session's moto server, emptied: every test that uses it builds its own fleet."""
    import urllib.request

    request = urllib.request.Request(f"{aws_env}/moto-api/reset", method="POST")
    # Generous, and the only place it is written: a reset after a large or multi-account
    # fleet takes seconds on a loaded machine (a 10 s bound failed the suite at load 15).
    with urllib.request.urlopen(request, timeout=120) as response:
        assert response.status == 200
    return aws_env


# --------------------------------------------------------------------------- a kit in git

_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True, env={**os.environ, **_GIT_ENV})
    return done.stdout


def commit(repo: Path, tag: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", tag)
    git(repo, "tag", tag)


def make_kit_repo(repo: Path) -> Path:
    """A throwaway git repository holding a copy of the kit (gpupool/, infra/, Pulumi.yaml,
    stacks/) with three tagged commits: ``no-dev`` (no dev stack), ``broken`` (a typo in the
    dev stack) and ``good``; the working tree then raises the inference pool's maxSize from 4
    to 6. ``gpupool check --stack dev --base good`` run in it plans both sides for real."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("gpupool", "infra"):
        shutil.copytree(ROOT / name, repo / name, ignore=ignore)
    shutil.copytree(ROOT / "stacks", repo / "stacks", ignore=ignore)
    shutil.copy(ROOT / "Pulumi.yaml", repo / "Pulumi.yaml")
    dev = repo / "stacks" / "Pulumi.dev.yaml"
    good = dev.read_text()
    assert "maxSize: 4" in good
    git(repo, "init", "-q")
    dev.unlink()
    commit(repo, "no-dev")
    dev.write_text(good.replace("minSize:", "minSzie:", 1))
    commit(repo, "broken")
    dev.write_text(good)
    commit(repo, "good")
    dev.write_text(good.replace("maxSize: 4", "maxSize: 6", 1))
    return repo

