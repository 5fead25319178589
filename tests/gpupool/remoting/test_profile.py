"""Profile files: validated like stack files, every problem at once, one line each."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpupool.errors import InputError
from gpupool.remoting import load_profile

GOOD = """\
name: bert-inference
local_time_s: 2.0
sync_calls: 12000
async_calls: 80000
local_calls: 5000
bytes_to_gpu: 1.2e9
bytes_from_gpu: 3.0e8
"""


def write(tmp_path: Path, text: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_issue_example_loads(tmp_path: Path) -> None:
    p = load_profile(write(tmp_path, GOOD))
    # PyYAML reads 1.2e9 (no exponent sign) as text: the profile still means the number
    assert p.bytes_to_gpu == 1.2e9 and p.bytes_from_gpu == 3.0e8
    assert (p.sync_calls, p.async_calls, p.local_calls) == (12000, 80000, 5000)
    assert p.total_bytes == 1.5e9 and p.calls == 97000 and p.trace is None


def test_counts_written_as_floats_are_whole_numbers(tmp_path: Path) -> None:
    p = load_profile(write(tmp_path, GOOD.replace("12000", "1.2e4")))
    assert p.sync_calls == 12000 and isinstance(p.sync_calls, int)


def test_every_problem_at_once_in_file_order(tmp_path: Path) -> None:
    text = """\
name: ""
local_time_s: 0
sync_calls: 12.5
async_call: 3
bytes_to_gpu: lots
trace: missing.csv
"""
    path = write(tmp_path, text)
    with pytest.raises(InputError) as e:
        load_profile(path)
    lines = e.value.problems
    shown = str(path)
    assert lines == [
        f"{shown}: name: expected a name of 1-100 printable characters, got ''",
        f"{shown}: local_time_s: expected at least 1e-06, got 0",
        f"{shown}: sync_calls: expected a whole number, got 12.5",
        f"{shown}: async_call: expected a known key, not this one (did you mean async_calls?)",
        f"{shown}: bytes_to_gpu: expected a number, got 'lots'",
        f"{shown}: trace: expected an existing CSV file, got 'missing.csv' "
        f"(looked for {tmp_path / 'missing.csv'})",
        f"{shown}: bytes_from_gpu: expected a value, but the key is missing",
    ]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("- a\n- b\n", "expected a mapping of profile keys"),
        ("name: [\n", "expected valid YAML"),
        (GOOD + "sync_calls: 3\n", "key 'sync_calls' appears twice"),
        (GOOD.replace("2.0", "-1"), "local_time_s: expected at least 1e-06, got -1"),
        (GOOD.replace("3.0e8", ".nan"), "bytes_from_gpu: expected a finite number"),
        (GOOD.replace("5000", "-3"), "local_calls: expected at least 0, got -3"),
    ],
)
def test_bad_files_are_one_clear_line(tmp_path: Path, text: str, line: str) -> None:
    with pytest.raises(InputError) as e:
        load_profile(write(tmp_path, text))
    assert len(e.value.problems) == 1
    assert line in e.value.problems[0]
    assert e.value.problems[0].startswith(str(tmp_path / "p.yaml") + ": ")


def test_trace_is_relative_to_the_profile(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "t.csv").write_text("name,kind\n")
    p = load_profile(write(tmp_path / "sub", GOOD + "trace: t.csv\n"))
    assert p.trace == tmp_path / "sub" / "t.csv"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_profile(tmp_path / "nope.yaml")
