"""An application profile: what one run of an application asks of a remote GPU.

A profile is measured on a host with a local GPU (Nsight Systems, the CUDA API trace of a
remoting layer; see docs/remoting.md) and written as a small YAML file:

.. code-block:: yaml

    name: bert-inference
    local_time_s: 2.0        # run time with a local GPU
    sync_calls: 12000        # calls whose result the client waits for
    async_calls: 80000       # calls sent without waiting (outstanding requests)
    local_calls: 5000        # calls answered on the client (shadow resources)
    bytes_to_gpu: 1.2e9
    bytes_from_gpu: 3.0e8
    trace: bert.csv          # optional: per-call trace, relative to this file

The file is validated like a stack file: every problem at once, one line each, as
``file: key: expected …`` (:class:`~gpupool.errors.InputError`, exit 2 in the CLI). Counts and
byte totals are required: a forgotten ``bytes_to_gpu`` must not silently make a budget look
easy. ``async_calls`` and ``local_calls`` default to 0 because the first-order model does not
charge them; they are still shown, since they say how much remoting already hides.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from gpupool.errors import InputError
from gpupool.yamlio import decode_text, parse_yaml, quote


def _number_text(value: Any) -> Any:
    """YAML 1.1 reads ``1.2e9`` (no sign in the exponent) as text; take it as the number.

    ``.nan`` and ``.inf`` are refused here, before any bound is checked, so the message says
    what is wrong with them rather than that NaN is not at least 0.
    """
    if isinstance(value, str):
        try:
            value = float(value.strip().replace("_", ""))
        except ValueError:
            return value
    if isinstance(value, float) and not math.isfinite(value):
        raise PydanticCustomError("finite_number", "Input should be a finite number")
    return value


def _whole(value: Any) -> Any:
    """A count written as ``1.2e4`` or ``12000.0`` is the whole number 12000."""
    value = _number_text(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


# Upper bounds far past any real run (a million calls a second for a decade; an exabyte; 30
# years) keep every figure finite: 1e308 bytes would make the overhead infinite.
Count = Annotated[int, BeforeValidator(_whole), Field(ge=0, le=10**15, strict=False)]
Bytes = Annotated[float, BeforeValidator(_number_text),
                  Field(ge=0, le=1e18, allow_inf_nan=False)]
Seconds = Annotated[float, BeforeValidator(_number_text),
                    Field(ge=1e-6, le=1e9, allow_inf_nan=False)]


class Profile(BaseModel):
    """Call counts and bytes of one application run on a local GPU."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f\x7f]+$")]
    local_time_s: Seconds
    sync_calls: Count
    async_calls: Count = 0
    local_calls: Count = 0
    bytes_to_gpu: Bytes
    bytes_from_gpu: Bytes
    trace: Path | None = None

    @property
    def total_bytes(self) -> float:
        return self.bytes_to_gpu + self.bytes_from_gpu

    @property
    def calls(self) -> int:
        return self.sync_calls + self.async_calls + self.local_calls


KEYS = tuple(Profile.model_fields)
MAX_PROFILE_BYTES = 1 << 20

_KIND = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "string_type": "text",
    "path_type": "a file path",
}


def _got(value: Any) -> str:
    if value is None:
        return "null (no value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return quote(value)


def _expected(err: Mapping[str, Any]) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    got = _got(err.get("input"))
    loc = err["loc"]
    if kind == "missing":
        return "expected a value, but the key is missing"
    if kind == "extra_forbidden":
        close = difflib.get_close_matches(str(loc[-1]), KEYS, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else f" (known keys: {', '.join(KEYS)})"
        return f"expected a known key, not this one{hint}"
    if kind in _KIND:
        return f"expected {_KIND[kind]}, got {got}"
    if kind == "greater_than_equal":
        return f"expected at least {ctx.get('ge'):g}, got {got}"
    if kind == "greater_than":
        return f"expected more than {ctx.get('gt'):g}, got {got}"
    if kind == "less_than_equal":
        return f"expected at most {ctx.get('le'):g}, got {got}"
    if kind in ("string_too_short", "string_too_long", "string_pattern_mismatch"):
        return f"expected a name of 1-100 printable characters, got {got}"
    return f"expected a valid value ({err['msg']}), got {got}"


def _key(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) if str(p).isprintable() else repr(p) for p in loc) or "(top)"


def parse_profile(data: Any, shown: str, base_dir: Path | None = None) -> Profile:
    """Validate a parsed profile document; every problem at once as one InputError.

    A relative ``trace`` path is taken relative to ``base_dir`` (the profile's directory), and
    the file must exist: a budget that silently fell back to the first-order model because of a
    typo in the trace path would be a different answer than the one asked for.
    """
    if not isinstance(data, dict):
        raise InputError(f"{shown}: expected a mapping of profile keys ({', '.join(KEYS)})")
    problems: list[tuple[int, str]] = []
    order = {k: i for i, k in enumerate(data)}
    profile: Profile | None = None
    try:
        profile = Profile.model_validate(data)
    except ValidationError as e:
        for r in e.errors():
            top = r["loc"][0] if r["loc"] else ""
            problems.append((order.get(top, len(order)), f"{shown}: {_key(tuple(r['loc']))}: "
                             f"{_expected(r)}"))
    trace = data.get("trace")
    path: Path | None = None
    if isinstance(trace, str) and trace.strip():
        path = Path(trace) if base_dir is None else base_dir / trace
        if not path.is_file():
            problems.append((order["trace"], f"{shown}: trace: expected an existing CSV file, "
                             f"got {quote(trace)} (looked for {path})"))
    if problems or profile is None:
        raise InputError([line for _, line in sorted(problems, key=lambda p: p[0])])
    return profile if path is None else profile.model_copy(update={"trace": path})


def load_profile(path: str | Path) -> Profile:
    """Read and validate a profile file: a regular file of at most :data:`MAX_PROFILE_BYTES`
    (a profile is a dozen lines; a device or a FIFO is refused, and its trace is looked for
    beside it), YAML through :func:`gpupool.yamlio.parse_yaml`."""
    from gpupool.inputs import read_regular

    p = Path(path)
    shown = str(path)
    raw = read_regular(p, shown, limit=MAX_PROFILE_BYTES, what="a profile (YAML)")
    return parse_profile(parse_yaml(decode_text(raw, shown), shown), shown, p.parent)
