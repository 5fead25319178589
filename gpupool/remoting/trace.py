"""A per-call trace: one CUDA API call a row, in the order the application issued them.

The columns are those of the rperf tool's per-call model (Wang et al., arXiv 2401.13354; the
authors' ``rperf/api.py``): how the remoting layer treats the call (``kind``), what the call
waits for on a local GPU (``blocking``), the request and reply payloads, and the times of its
parts::

    name,kind,blocking,bytes_to_gpu,bytes_from_gpu,serialise_us,deserialise_us,process_us,gap_us,block_us
    cudaMalloc,SYNC,GPUBlocking,16,12,0.4,0.4,3.1,12.0,0
    cudaLaunchKernel,ASYNC,GPUBlocking,256,0,0.6,0.6,2.2,4.5,180.0
    cudaStreamSynchronize,SYNC,CPUBlocking,8,4,0.3,0.3,1.0,0.8,0

- ``kind``: ``SYNC`` (the client waits for the reply), ``ASYNC`` (sent without waiting: an
  outstanding request), ``LOCAL`` (answered on the client from a shadow copy; nothing is sent);
- ``blocking``: ``NonBlocking`` (returns at once), ``GPUBlocking`` (queues GPU work of
  ``block_us``: a kernel, a copy), ``CPUBlocking`` (waits for the GPU's queue to drain, then
  ``block_us``: a synchronise);
- ``bytes_to_gpu`` / ``bytes_from_gpu``: payload of the request and of the reply;
- ``serialise_us`` / ``deserialise_us``: marshalling on the client / unmarshalling on the proxy;
  ``process_us``: the API's own CPU time; ``gap_us``: the application's CPU time since the
  previous call returned; ``block_us``: the GPU time the call queues or waits (see blocking).

A ``CPUBlocking`` call must be ``SYNC``: it exists to wait for the GPU, so it can be neither
sent without waiting nor answered from a shadow. The file is read with pandas' C parser (a
million rows in a fraction of a second); bad input is reported as ``file: line N: column:
expected …``, the first few problems at once, with how many more there are.
"""

from __future__ import annotations

import csv
import difflib
import io
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from gpupool.errors import InputError
from gpupool.yamlio import quote

SYNC: Final = 0
ASYNC: Final = 1
LOCAL: Final = 2
KINDS: Final = ("SYNC", "ASYNC", "LOCAL")

NON_BLOCKING: Final = 0
GPU_BLOCKING: Final = 1
CPU_BLOCKING: Final = 2
BLOCKINGS: Final = ("NonBlocking", "GPUBlocking", "CPUBlocking")

TEXT_COLUMNS: Final = ("name", "kind", "blocking")
NUMBER_COLUMNS: Final = (
    "bytes_to_gpu",
    "bytes_from_gpu",
    "serialise_us",
    "deserialise_us",
    "process_us",
    "gap_us",
    "block_us",
)
COLUMNS: Final = TEXT_COLUMNS + NUMBER_COLUMNS
# American spellings are the same columns (Nsight and most tools write "serialize").
ALIASES: Final = {"serialize_us": "serialise_us", "deserialize_us": "deserialise_us"}
MAX_SHOWN: Final = 5  # problems listed before "… and N more"
MAX_TRACE_BYTES: Final = 256 << 20  # about three million calls; a device or a FIFO is refused
# One call's figures, far past any real one (10 TB in one call, 3 hours of one call's time),
# so that sums over millions of calls stay finite: 1e308 would make every total infinite.
MAX_VALUE: Final = {c: 1e13 if c.startswith("bytes") else 1e10 for c in NUMBER_COLUMNS}

Floats = npt.NDArray[np.float64]
Codes = npt.NDArray[np.int8]


@dataclass(frozen=True, eq=False)
class Trace:
    """The calls of one run as columns (numpy arrays of equal length)."""

    names: tuple[str, ...]  # distinct call names; ``name`` indexes into it
    name: npt.NDArray[np.int32]
    kind: Codes
    blocking: Codes
    bytes_to_gpu: Floats
    bytes_from_gpu: Floats
    serialise_us: Floats
    deserialise_us: Floats
    process_us: Floats
    gap_us: Floats
    block_us: Floats

    def __len__(self) -> int:
        return int(self.kind.shape[0])

    def count(self, kind: int) -> int:
        return int(np.count_nonzero(self.kind == kind))

    @property
    def total_bytes_to_gpu(self) -> float:
        return float(self.bytes_to_gpu.sum())

    @property
    def total_bytes_from_gpu(self) -> float:
        return float(self.bytes_from_gpu.sum())

    def with_kind(self, calls: npt.NDArray[np.bool_], kind: int) -> Trace:
        """The same trace with the selected calls turned into ``kind`` (a what-if)."""
        changed = self.kind.copy()
        changed[calls] = kind
        return replace(self, kind=changed)

    def mask_of(self, name: str) -> npt.NDArray[np.bool_]:
        return self.name == self.names.index(name)


def make_trace(rows: list[dict[str, Any]]) -> Trace:
    """A trace from row mappings (tests, small hand-made traces); missing numbers are 0."""
    names = tuple(dict.fromkeys(str(r["name"]) for r in rows))
    return Trace(
        names=names,
        name=np.array([names.index(str(r["name"])) for r in rows], dtype=np.int32),
        kind=np.array([KINDS.index(r["kind"]) for r in rows], dtype=np.int8),
        blocking=np.array([BLOCKINGS.index(r["blocking"]) for r in rows], dtype=np.int8),
        **{c: np.array([float(r.get(c, 0.0)) for r in rows], dtype=np.float64)
           for c in NUMBER_COLUMNS},
    )


def _header_problems(header: list[str], shown: str) -> list[str]:
    problems: list[str] = []
    seen = [ALIASES.get(h.strip(), h.strip()) for h in header]
    if not any(c in COLUMNS for c in seen):  # not a trace at all: one line says so
        return [f"{shown}: line 1: expected a CSV header naming the columns "
                f"{','.join(COLUMNS)}; none of its {len(seen)} field(s) is one"]
    for i, canonical in enumerate(seen, 1):
        if canonical not in COLUMNS:
            close = difflib.get_close_matches(canonical, COLUMNS, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else ""
            # the column's position, not its text: a trace path may name any file, and its
            # first line is never echoed into a log (a typo still gets its did-you-mean)
            problems.append(f"{shown}: line 1: column {i}: expected a known column "
                            f"name{hint}")
    for c in COLUMNS:
        if seen.count(c) > 1:
            problems.append(f"{shown}: line 1: {c}: expected once, found {seen.count(c)} times")
        elif c not in seen:
            problems.append(f"{shown}: line 1: {c}: expected this column, but it is missing "
                            f"(columns: {','.join(COLUMNS)})")
    return problems


def load_trace(path: str | Path, shown: str | None = None) -> Trace:
    """Read and validate a trace CSV; :class:`InputError` lists the first problems at once."""
    import pandas as pd

    from gpupool.inputs import read_regular

    shown = shown or str(path)
    raw = read_regular(path, shown, limit=MAX_TRACE_BYTES, what="a trace (CSV)")
    try:
        header = raw.partition(b"\n")[0].decode("utf-8").rstrip("\r").split(",")
    except UnicodeDecodeError:
        raise InputError(f"{shown}: expected UTF-8 text") from None
    if header == [""]:
        raise InputError(f"{shown}: expected a CSV header line ({','.join(COLUMNS)})")
    problems = _header_problems(header, shown)
    if problems:
        raise InputError(problems)
    columns = [ALIASES.get(h.strip(), h.strip()) for h in header]
    try:  # fast path: typed columns in the C parser; any problem re-reads the file as text
        df = pd.read_csv(  # spaces after commas: text is stripped below, numbers parse anyway
            io.BytesIO(raw), engine="c", header=0, names=columns,
            dtype={**{c: "category" for c in TEXT_COLUMNS},
                   **{c: np.float64 for c in NUMBER_COLUMNS}},
        )
        trace = _fast(df)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError):
        trace = None
    return trace if trace is not None else _read_slowly(raw, columns, shown)


def _codes(cat: Any, allowed: tuple[str, ...]) -> Codes:
    """Category codes of a pandas categorical re-based onto ``allowed`` (-1: not allowed)."""
    mapping = np.array([allowed.index(c.strip()) if str(c).strip() in allowed else -1
                        for c in cat.cat.categories] + [-1], dtype=np.int8)
    return mapping[np.asarray(cat.cat.codes)]  # code -1 (missing) picks the trailing -1


def _fast(df: Any) -> Trace | None:
    """The trace when every value is valid, else None (the caller then explains why)."""
    if len(df) == 0:
        return None
    kind = _codes(df["kind"], KINDS)
    blocking = _codes(df["blocking"], BLOCKINGS)
    numbers = {c: df[c].to_numpy(dtype=np.float64) for c in NUMBER_COLUMNS}
    names = df["name"]
    if (kind < 0).any() or (blocking < 0).any() or names.isna().any():
        return None
    if any(not np.all(np.isfinite(v) & (v >= 0) & (v <= MAX_VALUE[c]))
           for c, v in numbers.items()):
        return None
    if ((blocking == CPU_BLOCKING) & (kind != SYNC)).any():
        return None
    stripped = [str(c).strip() for c in names.cat.categories]
    if "" in stripped:
        return None
    distinct = tuple(dict.fromkeys(stripped))
    remap = np.array([distinct.index(c) for c in stripped], dtype=np.int32)
    return Trace(names=distinct, name=remap[np.asarray(names.cat.codes)],
                 kind=kind, blocking=blocking, **numbers)


def _number(text: str, column: str) -> float | None:
    try:
        value = float(text) if "_" not in text else math.nan
    except ValueError:
        return None
    return value if math.isfinite(value) and 0 <= value <= MAX_VALUE[column] else None


def _read_slowly(raw: bytes, columns: list[str], shown: str) -> Trace:
    """The trace read row by row with ``csv``, or every problem, the first few spelled out.

    Slow, but it only runs on a file the fast path refused (which is nearly always wrong), and
    it can say which line and which column. A file it accepts is read, so the two readers never
    disagree about what is valid.
    """
    lines: list[str] = []
    more = 0

    def report(line: str) -> None:
        nonlocal more
        if len(lines) < MAX_SHOWN:
            lines.append(f"{shown}: {line}")
        else:
            more += 1

    at = {c: columns.index(c) for c in COLUMNS}
    names: dict[str, int] = {}
    codes: list[tuple[int, int, int]] = []
    values: list[list[float]] = []
    try:
        with io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", newline="") as f:
            reader = csv.reader(f, skipinitialspace=True)
            next(reader, None)
            for row in reader:
                line = reader.line_num
                if not row:
                    continue
                if len(row) != len(columns):
                    report(f"line {line}: expected {len(columns)} fields, got {len(row)}")
                    continue
                name = row[at["name"]].strip()
                kind = row[at["kind"]].strip()
                blocking = row[at["blocking"]].strip()
                numbers = [_number(row[at[c]].strip(), c) for c in NUMBER_COLUMNS]
                bad = len(lines) + more
                if not name:
                    report(f"line {line}: name: expected a call name, got ''")
                if kind not in KINDS:
                    report(f"line {line}: kind: expected SYNC, ASYNC or LOCAL, got {quote(kind)}")
                if blocking not in BLOCKINGS:
                    report(f"line {line}: blocking: expected NonBlocking, GPUBlocking or "
                           f"CPUBlocking, got {quote(blocking)}")
                for c, v in zip(NUMBER_COLUMNS, numbers, strict=True):
                    if v is None:
                        report(f"line {line}: {c}: expected a finite number from 0 to "
                               f"{MAX_VALUE[c]:g}, got {quote(row[at[c]].strip())}")
                if blocking == "CPUBlocking" and kind in ("ASYNC", "LOCAL"):
                    report(f"line {line}: kind: expected SYNC for a CPUBlocking call (it waits "
                           "for the GPU, so it can be neither sent without waiting nor answered "
                           f"from a shadow), got {quote(kind)}")
                if len(lines) + more == bad:
                    codes.append((names.setdefault(name, len(names)), KINDS.index(kind),
                                  BLOCKINGS.index(blocking)))
                    values.append([v for v in numbers if v is not None])
    except UnicodeDecodeError as e:
        raise InputError(f"{shown}: expected UTF-8 text ({e.reason} at byte {e.start} of a "
                         "block)") from None
    except csv.Error as e:
        raise InputError(f"{shown}: expected CSV with one call a row ({e})") from None
    if more:
        lines.append(f"{shown}: … and {more} more problem(s) like these")
    if lines:
        raise InputError(lines)
    if not codes:
        raise InputError(f"{shown}: expected at least one call after the header")
    code = np.array(codes, dtype=np.int64).reshape(-1, 3)
    number = np.array(values, dtype=np.float64).reshape(-1, len(NUMBER_COLUMNS))
    return Trace(names=tuple(names), name=code[:, 0].astype(np.int32),
                 kind=code[:, 1].astype(np.int8), blocking=code[:, 2].astype(np.int8),
                 **{c: np.ascontiguousarray(number[:, i]) for i, c in enumerate(NUMBER_COLUMNS)})
