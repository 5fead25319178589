"""Names from plans, configs, traces and clouds are shown on a terminal, never obeyed (issue 16,
item 14): escape sequences (ESC, CSI, OSC), C1 controls, carriage returns and Unicode BIDI
overrides reach the screen as visible escapes, and rich markup in a name is shown as text.
JSON keeps the value as it is (its encoder escapes controls)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import TF_UPSIZE, run_in_process

from gpupool.terminal import rich_text, safe

# clear the screen, set the window title (OSC), a C1 CSI, a carriage return that overwrites the
# line, a right-to-left override and a zero-width space
HOSTILE = "gpu\x1b[2J\x1b]0;owned\x07\x9b31m\r\u202eevil\u200b"
SHOWN = "gpu\\x1b[2J\\x1b]0;owned\\x07\\x9b31m\\x0d\\u202eevil\\u200b"
RAW = ("\x1b", "\x07", "\x9b", "\r", "\u202e", "\u200b")


def _clean(text: str) -> bool:
    return not any(ch in text for ch in RAW)


def test_safe_escapes_every_control_and_keeps_the_rest() -> None:
    assert safe(HOSTILE) == SHOWN
    assert safe("Grüße, 東京, café ✓") == "Grüße, 東京, café ✓"  # printable: as it is
    assert safe("a\tb\nc") == "a\\x09b\\x0ac"
    assert safe("a\nb\r\n", multiline=True) == "a\nb\\x0d\n"
    assert safe("\u2066x\u2069\u2028\x7f\x00") == "\\u2066x\\u2069\\u2028\\x7f\\x00"
    assert safe("\U000e0041") == "\\U000e0041"  # a tag character (format, invisible)
    assert safe(42) == "42"


def test_rich_text_is_never_markup() -> None:
    from rich.console import Console

    console = Console(width=80, force_terminal=False, color_system=None)
    with console.capture() as cap:
        console.print(rich_text("[/] [bold]x[/bold] [link=https://evil]y[/link]\x1b[2J"))
    assert cap.get() == "[/] [bold]x[/bold] [link=https://evil]y[/link]\\x1b[2J\n"


def _hostile_plan(tmp_path: Path) -> Path:
    # the instance's name, wherever the plan says it (changes, planned values, configuration)
    path = tmp_path / "plan.json"
    path.write_text(TF_UPSIZE.read_text().replace("trainer", json.dumps(HOSTILE)[1:-1]))
    return path


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_a_plans_names_are_shown_not_obeyed(tmp_path: Path, fmt: str) -> None:
    run = run_in_process(["check", str(_hostile_plan(tmp_path)), "--format", fmt])
    assert run.code == 1, run.err
    assert _clean(run.out), [line for line in run.out.splitlines() if not _clean(line)]
    assert "\\x1b" in run.out and "\\u202e" in run.out


def test_json_keeps_the_name_as_it_is(tmp_path: Path) -> None:
    run = run_in_process(["check", str(_hostile_plan(tmp_path)), "--format", "json"])
    names = {v["resource"] for v in json.loads(run.out)["violations"]}
    assert f"aws_instance.{HOSTILE}" in names


def test_error_lines_show_what_the_file_said(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "hidden_size": HOSTILE}))
    run = run_in_process(["estimate", "--model-config", str(config)])
    assert run.code == 2 and _clean(run.err), run.err
    assert "\\x1b[2J" in run.err


def test_argparse_errors_too() -> None:
    run = run_in_process(["catalog", "--gpu", "T4", "--bogus\x1b[2J"])
    assert run.code == 2 and _clean(run.err), run.err


HEADER = ("name,kind,blocking,bytes_to_gpu,bytes_from_gpu,serialise_us,deserialise_us,"
          "process_us,gap_us,block_us\n")


def test_a_traces_call_names_and_a_profiles_name_in_the_remoting_report(tmp_path: Path) -> None:
    call = "cuda[/]\x1b]0;x\x07Sync"  # rich markup that would crash the table, and an OSC
    (tmp_path / "t.csv").write_text(HEADER + "".join(  # queries worth a what-if, and kernels
        f"{call},SYNC,NonBlocking,8,4,0.3,0.3,1.0,0.8,0\n"
        "cudaLaunchKernel,ASYNC,GPUBlocking,8,4,0.3,0.3,1.0,0.8,100\n" for _ in range(50)))
    (tmp_path / "p.yaml").write_text("name: \"app\\u202e\\x9b\"\nlocal_time_s: 0.01\n"
                                     "sync_calls: 50\nbytes_to_gpu: 400\nbytes_from_gpu: 200\n"
                                     "trace: t.csv\n")
    run = run_in_process(["remoting", str(tmp_path / "p.yaml"), "--rtt-us", "20",
                          "--bandwidth-gbps", "10"])
    assert run.code in (0, 1), run.err
    assert _clean(run.out), [line for line in run.out.splitlines() if not _clean(line)]
    assert "app\\u202e\\x9b: remoting budget" in run.out
    assert "cuda[/]\\x1b]0;x\\x07Sync" in run.out  # the what-if row names the call as it is


def test_a_models_name_in_the_estimate(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "_name_or_path": "org/model\x1b[2J\u202e", "model_type": "llama", "hidden_size": 512,
        "num_hidden_layers": 4, "num_attention_heads": 8, "vocab_size": 1000,
        "intermediate_size": 1024}))
    run = run_in_process(["estimate", "--model-config", str(config)])
    assert run.code == 0, run.err
    assert _clean(run.out) and run.out.startswith("org/model\\x1b[2J\\u202e: ")


def test_aws_names_in_the_debt_report_go_through_the_same_helper() -> None:
    from gpupool.debt.text import plain

    assert plain(HOSTILE) == safe(HOSTILE) == SHOWN  # BIDI overrides included, not only C0/C1
