"""Old inputs for CrossGuard, from a ``pulumi stack export`` file.

Pulumi passes a policy only the new inputs (pulumi-policy#154), so on its own a pack cannot see
that ``g4dn.xlarge`` became ``g4dn.2xlarge``. A stack export holds every resource's last
deployed inputs by URN; given one, the pack can feed ``gpu-no-vertical-upsize`` the old value
and ``pulumi up`` blocks the upsize too. The file is parsed once and re-read only when it
changes (path, mtime and size), since the CLI calls the pack once per resource.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from gpupool import jsonio
from policies.model import UNKNOWN, normalise_inputs

SUPPORTED_VERSIONS: Final = frozenset({1, 2, 3})  # apitype.DeploymentV1..V3: same resource shape
_SIG_KEY: Final = "4dabf18193072939515e22adb298388d"
_SECRET_SIG: Final = "1b47061264138c4ac30d75fd1eb44270"


class BaselineError(ValueError):
    """The baseline cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Baseline:
    path: str
    inputs_by_urn: Mapping[str, Mapping[str, Any]]  # normalised (snake_case), UNKNOWN for secrets
    types_by_urn: Mapping[str, str]

    def old_inputs(self, urn: str, type_: str) -> Mapping[str, Any] | None:
        """The deployed inputs of ``urn``, or None when it is new (or was another type)."""
        if self.types_by_urn.get(urn) != type_:
            return None
        return self.inputs_by_urn.get(urn)

    def __len__(self) -> int:
        return len(self.inputs_by_urn)


def resolve_path(raw: str, base_dir: str | os.PathLike[str] | None = None) -> Path:
    """``~`` and ``$VARS`` expanded; relative paths against ``base_dir`` (default: the cwd,
    which the CLI sets to the policy pack's directory)."""
    p = Path(os.path.expandvars(os.path.expanduser(raw)))
    if not p.is_absolute():
        p = Path(base_dir or os.getcwd()) / p
    return p.resolve()


def parse_export(document: Any, path: str) -> Baseline:
    """A ``pulumi stack export`` document → :class:`Baseline` (or :class:`BaselineError`)."""
    where = f"baseline {path}"
    if not isinstance(document, Mapping):
        raise BaselineError(f"{where}: expected a JSON object from `pulumi stack export`")
    version = document.get("version")
    if version not in SUPPORTED_VERSIONS:
        raise BaselineError(
            f"{where}: version {version!r} is not a `pulumi stack export` format this pack reads "
            f"(expected one of {sorted(SUPPORTED_VERSIONS)})"
        )
    deployment = document.get("deployment")
    if not isinstance(deployment, Mapping):
        raise BaselineError(f"{where}: `deployment` is missing or not an object")
    resources = deployment.get("resources") or []
    if not isinstance(resources, list):
        raise BaselineError(f"{where}: `deployment.resources` must be a list")

    inputs: dict[str, Mapping[str, Any]] = {}
    types: dict[str, str] = {}
    for i, r in enumerate(resources):
        if not isinstance(r, Mapping) or not isinstance(r.get("urn"), str) \
                or not isinstance(r.get("type"), str):
            raise BaselineError(f"{where}: deployment.resources[{i}] has no string urn and type")
        if r.get("delete"):  # an old copy pending deletion after a replace: not the live one
            continue
        raw_inputs = r.get("inputs")
        if raw_inputs is None:  # providers and stacks carry no inputs
            raw_inputs = {}
        if not isinstance(raw_inputs, Mapping):
            raise BaselineError(f"{where}: deployment.resources[{i}].inputs must be an object")
        inputs[r["urn"]] = normalise_inputs(_reveal(raw_inputs))
        types[r["urn"]] = r["type"]
    return Baseline(path=path, inputs_by_urn=inputs, types_by_urn=types)


def _reveal(value: Any) -> Any:
    """Secrets exported with ``--show-secrets`` carry ``plaintext``; encrypted ones cannot be
    read here, so they are UNKNOWN (a rule then says "cannot verify", never passes)."""
    if isinstance(value, Mapping):
        if value.get(_SIG_KEY) == _SECRET_SIG:
            if "plaintext" in value:
                try:
                    return _reveal(json.loads(value["plaintext"]))
                except (TypeError, ValueError):
                    return UNKNOWN
            return UNKNOWN
        return {k: _reveal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_reveal(v) for v in value]
    return value


class BaselineCache:
    """Loads baselines on demand, re-reading a file only when it changed. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Path, tuple[tuple[int, int], Baseline]] = {}

    def load(self, raw_path: str, base_dir: str | os.PathLike[str] | None = None) -> Baseline:
        path = resolve_path(raw_path, base_dir)
        try:
            st = path.stat()
        except OSError as e:
            raise BaselineError(f"baseline {path}: cannot read it ({e.strerror})") from None
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            hit = self._entries.get(path)
            if hit is not None and hit[0] == stamp:
                return hit[1]
        try:
            document = jsonio.loads(path.read_bytes())
        except OSError as e:
            raise BaselineError(f"baseline {path}: cannot read it ({e.strerror})") from None
        except (ValueError, RecursionError) as e:  # JsonProblem: duplicate keys, NaN, …
            raise BaselineError(f"baseline {path}: not JSON ({e})") from None
        baseline = parse_export(document, str(path))
        with self._lock:
            self._entries[path] = (stamp, baseline)
        return baseline
