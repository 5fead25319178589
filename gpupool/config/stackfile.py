"""Where a stack's file is and what it holds.

STACK is a stack name of the Pulumi project in the working directory (``Pulumi.<name>.yaml`` in
the project's ``stackConfigDir``) or the path of a stack file; the file's ``config`` mapping is
the flat ``namespace:key`` mapping :func:`gpupool.config.loader.parse_flat_config` validates.

A stack file is Pulumi's stack settings file, whose top-level keys Pulumi defines
(``ProjectStack`` in pulumi/pulumi's ``sdk/go/common/workspace/project.go``): ``config``,
``secretsprovider``, ``encryptedkey``, ``encryptionsalt`` and ``environment``. Any other key is
refused, never ignored: a key nothing reads is either a typo or something slipped in (a
``secretsprovider:`` line smuggled through a header comment). Of Pulumi's own keys:

- ``secretsprovider``, ``encryptedkey`` and ``encryptionsalt`` are accepted, in the shapes
  Pulumi writes them (``pulumi stack init --secrets-provider``, ``pulumi config set --secret``):
  they say how the stack's ``secure:`` values are encrypted, which the kit never reads. They are
  Pulumi's to write: ``gpupool new-stack`` writes only ``config`` (its output is read back and
  must hold nothing else), so one of them in a team's stack is a reviewed, hand-made change;
- ``environment`` (Pulumi ESC environments) is refused: config an environment adds is
  invisible to ``validate``, ``plan`` and ``check``, which would judge a stack other than the one
  ``pulumi up`` deploys. Such a stack cannot be judged, so it does not pass.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from gpupool.errors import InputError
from gpupool.suggest import did_you_mean
from gpupool.yamlio import read_yaml

SETTINGS = ("config", "secretsprovider", "encryptedkey", "encryptionsalt")
# `pulumi stack init --secrets-provider`: default (Pulumi Cloud), passphrase, or a KMS URL
SECRETS_SCHEMES = ("awskms", "azurekeyvault", "gcpkms", "hashivault")
_PROVIDER = re.compile(rf"^(default|passphrase|({'|'.join(SECRETS_SCHEMES)})://[\x21-\x7e]+)$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
# the passphrase provider's salt and its check value: v1:<salt>:v1:<nonce>:<ciphertext>
_SALT = re.compile(r"^v1:[A-Za-z0-9+/=]*:v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$")
_SHAPES = {
    "secretsprovider": (_PROVIDER, "default, passphrase or a KMS URL "
                        f"({', '.join(s + '://…' for s in SECRETS_SCHEMES)})"),
    "encryptedkey": (_BASE64, "the base64 data key Pulumi wrote"),
    "encryptionsalt": (_SALT, "the salt Pulumi wrote (v1:…:v1:…:…)"),
}


def display_path(path: Path, cwd: Path | None = None) -> str:
    """``path`` relative to ``cwd`` when under it, else as given: short, copy-pasteable lines."""
    try:
        return str(path.resolve().relative_to((cwd or Path.cwd()).resolve()))
    except (ValueError, OSError):
        return str(path)


def stack_path(stack: str, cwd: Path | None = None) -> Path:
    """STACK is a path to a stack file, or a stack name of the project in ``cwd``."""
    cwd = cwd or Path.cwd()
    candidate = Path(stack)
    if candidate.suffix in {".yaml", ".yml"} or "/" in stack:
        if not candidate.is_file():
            raise InputError(f"{stack}: expected a stack file, but there is no such file")
        return candidate
    project = find_project(cwd)
    if project is None:
        raise InputError(
            f"{stack}: expected a stack name of a Pulumi project, but there is no Pulumi.yaml "
            f"in {cwd} or above; name a stack file instead"
        )
    config_dir = project.parent / stack_config_dir(project)
    path = config_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        known = sorted(p.name[7:-5] for p in config_dir.glob("Pulumi.*.yaml"))
        raise InputError(
            f"{display_path(path, cwd)}: expected a stack file for stack {stack!r}, "
            f"but there is none{did_you_mean(stack, known)} (known stacks: "
            f"{', '.join(known) or 'none'})"
        )
    return path


def find_project(cwd: Path) -> Path | None:
    """The ``Pulumi.yaml`` of the project ``cwd`` lies in (here or above), if any."""
    for d in (cwd, *cwd.resolve().parents):
        if (d / "Pulumi.yaml").is_file():
            return d / "Pulumi.yaml"
    return None


def stack_config_dir(project: Path) -> str:
    """The project's ``stackConfigDir`` (relative to its folder; ``.`` when not set)."""
    doc = read_yaml(project, display_path(project))
    value = doc.get("stackConfigDir", ".") if isinstance(doc, dict) else "."
    return str(value)


def read_stack_file(path: Path) -> dict[str, Any]:
    """The stack file's ``config`` mapping, flat ``namespace:key`` → value.

    Read with :func:`gpupool.yamlio.read_yaml`: duplicate keys, alias bombs, deep nesting,
    huge numbers and lone surrogates are each one line and exit 2, never a traceback.
    """
    shown = display_path(path)
    return stack_config(read_yaml(path, shown), shown)


def stack_config(doc: Any, shown: str) -> dict[str, Any]:
    """The ``config`` mapping of a stack settings document; InputError (one line per problem)
    for a key Pulumi does not define or a Pulumi key in a shape Pulumi does not write."""
    problems = settings_problems(doc, shown) if isinstance(doc, dict) else []
    if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict):
        problems.insert(0, f"{shown}: config: expected a mapping of Pulumi config keys")
    if problems:
        raise InputError(problems)
    return dict(doc["config"])


def settings_problems(doc: dict[Any, Any], shown: str) -> list[str]:
    out = []
    for key, value in doc.items():
        name = str(key)
        label = name if name.isprintable() and name.strip() == name and name else repr(name)
        if key == "config":
            continue
        if key == "environment":
            out.append(f"{shown}: environment: expected no Pulumi ESC environment: config it "
                       "adds is invisible to gpupool validate, plan and check, which would judge "
                       "a stack other than the one pulumi up deploys; write the keys in config")
        elif key in _SHAPES:
            pattern, what = _SHAPES[name]
            if not isinstance(value, str) or not pattern.fullmatch(value):
                got = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
                out.append(f"{shown}: {name}: expected {what}, got {got}")
        else:
            out.append(f"{shown}: {label}: expected one of Pulumi's stack settings "
                       f"({', '.join(SETTINGS)}){did_you_mean(name, SETTINGS)}, not this key")
    return out

