"""The gRPC harness itself, against a tiny echo pack written with plain pulumi-policy.

The echo pack reports what it received, so these tests prove the harness puts on the wire what
the Pulumi CLI would: the config the CLI completes, unknowns as the engine's sentinel, secrets,
parents and dependencies; and that a pack that cannot start says why.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from policies.testing import (
    UNKNOWN,
    UNKNOWN_SENTINEL,
    PackStartError,
    PolicyConfigError,
    PolicyPackHarness,
    Resource,
    Secret,
)
from policies.testing.values import from_struct, to_struct

ECHO = Path(__file__).parent / "packs" / "echo"
ECHO_TYPE = "test:index:Echo"


@pytest.fixture(scope="module")
def echo() -> Iterator[PolicyPackHarness]:
    with PolicyPackHarness(ECHO, stack="dev", project="demo") as h:
        yield h


def _echoed(h: PolicyPackHarness, props: dict[str, object]) -> dict[str, object]:
    result = h.analyze(ECHO_TYPE, "e", props)
    [d] = result.for_policy("echo-resource")
    return json.loads(d.detail)


def test_analyzer_info_lists_policies_with_levels_and_schema(echo: PolicyPackHarness) -> None:
    info = echo.get_analyzer_info()
    assert info.name == "echo" and info.supports_config
    assert info.policy_names == ["echo-resource", "echo-stack"]
    res = info.policy("echo-resource")
    assert (res.enforcement_level, res.policy_type) == ("mandatory", "resource")
    assert res.config_properties["limit"]["default"] == 3
    assert info.policy("echo-stack").policy_type == "stack"
    assert echo.get_plugin_info()  # the pulumi-policy SDK version string


def test_configure_completes_defaults_as_the_cli_does(echo: PolicyPackHarness) -> None:
    sent = echo.configure({})
    assert sent["echo-resource"] == {"enforcementLevel": "mandatory", "limit": 3}
    assert _echoed(echo, {"size": 1})["config"] == {"limit": 3}

    sent = echo.configure({"all": "advisory", "echo-resource": {"limit": 7}})
    assert sent["echo-resource"] == {"enforcementLevel": "advisory", "limit": 7}
    [d] = echo.analyze(ECHO_TYPE, "e", {"size": 1})
    assert d.enforcement_level == "advisory"
    assert json.loads(d.detail)["config"] == {"limit": 7}


def test_configure_refuses_what_the_cli_refuses(echo: PolicyPackHarness) -> None:
    with pytest.raises(PolicyConfigError, match="echo-resource: limit: 0 is less than"):
        echo.configure({"echo-resource": {"limit": 0}})
    with pytest.raises(PolicyConfigError, match="not a valid enforcement level"):
        echo.configure({"echo-resource": "sometimes"})


def test_disabled_policy_reports_nothing(echo: PolicyPackHarness) -> None:
    echo.configure({"echo-resource": "disabled"})
    assert echo.analyze(ECHO_TYPE, "e", {"size": 1}).diagnostics == []
    echo.configure({})


def test_values_arrive_as_sent_with_default_urn(echo: PolicyPackHarness) -> None:
    echo.configure({})
    result = echo.analyze(ECHO_TYPE, "e", {"size": Secret("s3cret")})
    [d] = result.diagnostics
    assert d.urn == "urn:pulumi:dev::demo::test:index:Echo::e"
    assert json.loads(d.detail)["size"] == "s3cret"
    assert d.policy_pack_name == "echo" and d.description == "Echoes a resource."


def test_unknown_is_sent_as_the_engine_sentinel(echo: PolicyPackHarness) -> None:
    # A plain pulumi-policy pack reading an unknown gets the SDK's own advisory note: the proof
    # that the value crossed the wire as the preview sentinel, not as a string.
    [d] = echo.analyze(ECHO_TYPE, "e", {"size": UNKNOWN})
    assert d.enforcement_level == "advisory"
    assert "can't be known during preview" in d.message and ".size" in d.message


def test_analyze_stack_carries_parent_and_dependencies(echo: PolicyPackHarness) -> None:
    a = echo.urn(ECHO_TYPE, "a")
    result = echo.analyze_stack(
        [Resource(ECHO_TYPE, "a", {}), Resource(ECHO_TYPE, "b", {}, parent=a, dependencies=[a])]
    )
    by_urn = {d.urn: json.loads(d.detail) for d in result.for_policy("echo-stack")}
    assert by_urn[a] == {"parent": None, "deps": []}
    assert by_urn[echo.urn(ECHO_TYPE, "b")] == {"parent": a, "deps": [a]}


def test_struct_round_trip_keeps_unknowns_and_secrets() -> None:
    props = {"a": UNKNOWN, "b": [1, {"c": UNKNOWN}], "s": Secret("x"), "n": None}
    struct = to_struct(props)
    assert struct["a"] == UNKNOWN_SENTINEL
    assert from_struct(struct) == {"a": UNKNOWN, "b": [1.0, {"c": UNKNOWN}], "s": Secret("x"),
                                   "n": None}
    with pytest.raises(TypeError, match="cannot send a object"):
        to_struct({"x": object()})


def test_a_pack_that_cannot_start_shows_its_stdout_and_stderr(tmp_path: Path) -> None:
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (tmp_path / "__main__.py").write_text(
        "print('starting the pack')\nimport no_such_module_for_the_harness_test\n")
    with pytest.raises(PackStartError) as e:
        PolicyPackHarness(tmp_path, startup_timeout=60).start()
    assert "before printing a port" in str(e.value)
    assert "stdout:\nstarting the pack" in str(e.value)  # what the pack printed, shown back
    assert "no_such_module_for_the_harness_test" in str(e.value)


def _processes_in(folder: Path) -> list[int]:
    """Processes whose working directory is ``folder`` (a pack runs in its directory)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if Path(os.readlink(proc / "cwd")) == folder:
                    found.append(int(proc.name))
            except OSError:  # gone meanwhile, or not ours to read
                continue
    return found


def test_a_silent_pack_times_out_and_is_stopped(tmp_path: Path) -> None:
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (tmp_path / "__main__.py").write_text("import time\ntime.sleep(600)\n")
    with pytest.raises(PackStartError, match="printed no port within 2 s"):
        PolicyPackHarness(tmp_path, startup_timeout=2).start()
    # stopped, not left behind, whether it was still starting or already asleep at the timeout
    assert _processes_in(tmp_path.resolve()) == []


def test_not_a_pack_directory(tmp_path: Path) -> None:
    with pytest.raises(PackStartError, match=r"has no PulumiPolicy\.yaml"):
        PolicyPackHarness(tmp_path)


def test_close_stops_the_process() -> None:
    h = PolicyPackHarness(ECHO).start()
    proc = h.process
    assert proc.running()
    h.close()
    assert not proc.running()
    with pytest.raises(RuntimeError, match="not running"):
        h.get_analyzer_info()
