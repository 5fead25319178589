"""Trace CSV files: read fast, and bad rows named by line and column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpupool.errors import InputError
from gpupool.remoting.trace import COLUMNS, CPU_BLOCKING, GPU_BLOCKING, LOCAL, SYNC, load_trace

HEADER = ",".join(COLUMNS)
GOOD = f"""{HEADER}
cudaMalloc,SYNC,GPUBlocking,16,12,0.4,0.4,3.1,12.0,0
cudaLaunchKernel,ASYNC,GPUBlocking,256,0,0.6,0.6,2.2,4.5,180.0
cudaGetDevice,LOCAL,NonBlocking,0,0,0,0,0.2,1,0
cudaStreamSynchronize, SYNC, CPUBlocking,8,4,0.3,0.3,1.0,0.8,0
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.csv"
    path.write_text(text)
    return path


def test_a_good_trace(tmp_path: Path) -> None:
    t = load_trace(write(tmp_path, GOOD))
    assert len(t) == 4
    assert [t.names[i] for i in t.name] == [
        "cudaMalloc", "cudaLaunchKernel", "cudaGetDevice", "cudaStreamSynchronize"]
    assert t.kind.tolist() == [SYNC, 1, LOCAL, SYNC]
    assert t.blocking.tolist() == [GPU_BLOCKING, GPU_BLOCKING, 0, CPU_BLOCKING]
    assert t.block_us.tolist() == [0, 180, 0, 0]
    assert t.total_bytes_to_gpu == 280 and t.total_bytes_from_gpu == 16
    assert (t.count(SYNC), t.count(1), t.count(LOCAL)) == (2, 1, 1)


def test_columns_in_any_order_and_american_spelling(tmp_path: Path) -> None:
    cols = list(reversed(COLUMNS))
    cols[cols.index("serialise_us")] = "serialize_us"
    rows = [",".join(reversed(line.replace(" ", "").split(","))) for line in GOOD.splitlines()[1:]]
    t = load_trace(write(tmp_path, ",".join(cols) + "\n" + "\n".join(rows) + "\n"))
    assert np.array_equal(t.serialise_us, [0.4, 0.6, 0, 0.3])
    assert t.kind.tolist() == [SYNC, 1, LOCAL, SYNC]


def test_header_problems_at_once(tmp_path: Path) -> None:
    text = "name,kind,blockng,bytes_to_gpu,bytes_from_gpu,serialise_us,deserialise_us," \
           "process_us,gap_us,block_us,extra\n"
    with pytest.raises(InputError) as e:
        load_trace(write(tmp_path, text))
    shown = str(tmp_path / "t.csv")
    assert e.value.problems == [
        f"{shown}: line 1: column 3: expected a known column name (did you mean blocking?)",
        f"{shown}: line 1: column 11: expected a known column name",
        f"{shown}: line 1: blocking: expected this column, but it is missing "
        f"(columns: {HEADER})",
    ]


def test_bad_rows_named_by_line_and_column(tmp_path: Path) -> None:
    text = f"""{HEADER}
cudaMalloc,SYNCH,GPUBlocking,16,12,0.4,0.4,3.1,12.0,0
cudaLaunchKernel,ASYNC,GPUBlocking,-256,0,0.6,0.6,2.2,4.5,lots
,ASYNC,GPUBlocking,1,0,0,0,0,0,0
cudaStreamSynchronize,ASYNC,CPUBlocking,8,4,0.3,0.3,1.0,nan,0
"""
    with pytest.raises(InputError) as e:
        load_trace(write(tmp_path, text))
    shown = str(tmp_path / "t.csv")
    assert e.value.problems == [
        f"{shown}: line 2: kind: expected SYNC, ASYNC or LOCAL, got 'SYNCH'",
        f"{shown}: line 3: bytes_to_gpu: expected a finite number from 0 to 1e+13, got '-256'",
        f"{shown}: line 3: block_us: expected a finite number from 0 to 1e+10, got 'lots'",
        f"{shown}: line 4: name: expected a call name, got ''",
        f"{shown}: line 5: gap_us: expected a finite number from 0 to 1e+10, got 'nan'",
        f"{shown}: … and 1 more problem(s) like these",  # line 5 is also ASYNC yet CPUBlocking
    ]


def test_many_bad_rows_are_summarised(tmp_path: Path) -> None:
    rows = "\n".join("k,SYNC,Blocking,1,1,1,1,1,1,1" for _ in range(100))
    with pytest.raises(InputError) as e:
        load_trace(write(tmp_path, f"{HEADER}\n{rows}\n"))
    assert len(e.value.problems) == 6
    assert e.value.problems[-1].endswith("… and 95 more problem(s) like these")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "expected a CSV header line"),
        (HEADER + "\n", "expected at least one call after the header"),
        (HEADER + "\ncudaMalloc,SYNC,GPUBlocking,16\n", "line 2: expected 10 fields, got 4"),
    ],
)
def test_empty_or_broken_files(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(InputError) as e:
        load_trace(write(tmp_path, text))
    assert len(e.value.problems) == 1 and expected in e.value.problems[0]


def test_not_utf8_and_missing(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(HEADER.encode() + b"\n\xff\xfe,SYNC\n")
    with pytest.raises(InputError, match="expected"):
        load_trace(path)
    with pytest.raises(InputError, match="no such file"):
        load_trace(tmp_path / "none.csv")


def test_the_careful_reader_agrees_with_the_fast_one(tmp_path: Path) -> None:
    # trailing spaces and names the C parser reads as missing values send the file to the
    # careful reader, which accepts what is valid: the two never disagree on validity
    text = GOOD.replace("cudaGetDevice,LOCAL ", "cudaGetDevice,LOCAL").replace(
        "LOCAL,NonBlocking", "LOCAL ,NonBlocking ").replace("cudaMalloc", "NA")
    t = load_trace(write(tmp_path, text))
    assert t.names[t.name[0]] == "NA" and t.kind.tolist() == [SYNC, 1, LOCAL, SYNC]
