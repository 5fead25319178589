"""Plan sources: read a plan file of any supported kind into the normalised :class:`Plan`.

The kind is detected from the content, never the file name: CI systems name plan files
anything. Whatever the input, :func:`load_plan` returns a Plan or raises
:class:`gpupool.errors.InputError` with one line naming the file, the key and what was expected;
no other exception escapes (a property test holds it to that). Input that cannot be judged is
refused, never turned into an empty, passing plan.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence

from gpupool.errors import InputError
from gpupool.gcpause import paused_gc
from gpupool.inputs import STDIN, shown_name
from gpupool.record import replace
from policies.model import Plan
from policies.sources.reading import (
    JsonLines,
    fail,
    is_k8s_object,
    looks_like_json,
    parse_json_bytes,
    problem,
    read_input,
    read_json,
)
from policies.sources.region import plan_region

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:  # each reader is imported when a plan of its kind is read
    from pathlib import Path
    from typing import Any, Final

    from policies.sources.kubernetes import Manifest

KUBERNETES: Final = "kubernetes"
TERRAFORM: Final = "terraform"
PULUMI_PREVIEW: Final = "pulumi-preview"
PULUMI_EVENTS: Final = "pulumi-events"
GPUPOOL_PLAN: Final = "gpupool-plan"



def _parser(kind: str) -> Callable[[dict[str, Any], str], Plan]:
    """The reader of one kind of plan, imported now (a check reads one or two kinds)."""
    if kind == TERRAFORM:
        from policies.sources import terraform

        return terraform.parse
    if kind == PULUMI_PREVIEW:
        from policies.sources import pulumi_preview

        return pulumi_preview.parse
    if kind == PULUMI_EVENTS:
        from policies.sources import pulumi_events

        return pulumi_events.parse
    from policies.sources import offline

    return offline.parse

_EXPECTED: Final = (
    "a Terraform plan (terraform show -json PLANFILE), a Pulumi preview (pulumi preview --json), "
    "a gpupool plan (gpupool plan STACK --format json) or Kubernetes manifests"
)


def detect(doc: Any, origin: str = "<input>") -> str:
    """Which kind of plan a parsed JSON document is: "terraform", "pulumi-preview",
    "pulumi-events" or "gpupool-plan". Lookalikes (state files, stack exports, UI logs) get a
    line saying what they are."""
    if isinstance(doc, JsonLines):
        return _detect_lines(doc, origin)
    if type(doc) is not dict:
        fail(origin, "", _EXPECTED, doc)
    if doc.get("kind") == GPUPOOL_PLAN:  # policies.sources.offline.KIND (test_detect.py)
        return GPUPOOL_PLAN
    if is_k8s_object(doc):
        return KUBERNETES
    if "format_version" in doc:
        if "resource_changes" in doc or "planned_values" in doc:
            return TERRAFORM
        if "values" in doc:
            raise problem(
                f"{origin}: expected a Terraform plan, got Terraform state as JSON "
                "(no resource_changes); use `terraform show -json PLANFILE`"
            )
        fail(origin, "resource_changes", "a Terraform plan's resource_changes or planned_values")
    if "lineage" in doc and "serial" in doc:
        raise problem(
            f"{origin}: expected a Terraform plan, got a Terraform state file; "
            "use `terraform plan -out=PLANFILE && terraform show -json PLANFILE`"
        )
    if "resource_changes" in doc or "planned_values" in doc:
        return TERRAFORM  # without format_version: the Terraform reader says what is missing
    if "steps" in doc or "changeSummary" in doc:
        return PULUMI_PREVIEW
    events = doc.get("events")
    if type(events) is list:
        from policies.sources.pulumi_events import is_event

        if not events or is_event(events[0]):
            return PULUMI_EVENTS
    if "checkpoint" in doc and "version" in doc:
        raise problem(
            f"{origin}: expected a Pulumi preview, got a Pulumi checkpoint (stack state); "
            "use `pulumi preview --json`"
        )
    if "deployment" in doc and "version" in doc:
        raise problem(
            f"{origin}: expected a Pulumi preview, got a stack export (state); "
            "use `pulumi preview --json`"
        )
    from policies.sources import hints

    hint = hints.config_json_hint(doc, origin)
    if hint is not None:
        raise problem(hint)
    keys = ", ".join(sorted(map(str, doc))[:5]) or "none"
    raise problem(f"{origin}: expected {_EXPECTED}, got an object with keys: {keys}")


def _detect_lines(lines: JsonLines, origin: str) -> str:
    from policies.sources.pulumi_events import is_event

    first = lines[0] if lines else None
    if is_event(first):
        return PULUMI_EVENTS
    if type(first) is dict and "@level" in first:
        raise problem(
            f"{origin}: expected one JSON document, got Terraform's JSON-lines UI log "
            "(`terraform plan -json`); use `terraform show -json PLANFILE`"
        )
    raise problem(f"{origin}: expected one JSON document ({_EXPECTED}), got {len(lines)} JSON "
                  "objects on separate lines")


def parse_document(doc: Any, origin: str, tf_root: str | Path | None = None, *,
                   from_json: bool = False) -> Plan:
    """A plan from an already parsed JSON document (origin names it in errors).

    ``tf_root``: the directory of a Terraform plan's root module sources (``.tf``), where they
    are at hand; read only for what the plan's JSON configuration leaves out (dynamic blocks).
    ``from_json``: ``doc`` was parsed from JSON text here, so ``json`` bounded its nesting and
    converting a Pulumi resource's inputs cannot overflow the stack later
    (:mod:`policies.deferred`); any other document is converted as it is read.
    """
    try:
        kind = detect(doc, origin)
        if kind == KUBERNETES:
            from policies.sources import kubernetes

            shown = origin
            docs = [kubernetes.YamlDocument(0, 1, doc)]
            return kubernetes.plan_of(kubernetes.manifests_of(docs, shown), origin)
        if kind == TERRAFORM and tf_root is not None:
            from policies.sources import terraform

            plan = terraform.parse(doc, origin, _dynamic_blocks_reader(doc, tf_root))
        elif from_json and kind in (PULUMI_PREVIEW, PULUMI_EVENTS):
            plan = _parser(kind)(doc, origin, True)  # type: ignore[call-arg]
        else:
            plan = _parser(kind)(doc, origin)
    except RecursionError:
        raise problem(f"{origin}: expected a JSON plan, got nesting too deep to read") from None
    region = (plan_region(kind, doc)
              if "region" not in plan.meta and isinstance(doc, dict) else None)
    if region is not None:  # costs are priced for the region the plan deploys to
        plan = replace(plan, meta={**plan.meta, "region": region})
    return plan


def _dynamic_blocks_reader(doc: Any, root: str | Path) -> Callable[[str], Any]:
    """:func:`policies.tfsource.dynamic_blocks_reader`, imported (with the HCL reader) on the
    first question: the Terraform reader asks only of a resource whose plan configuration lacks
    a block its planned values hold, and most plans' configuration holds every one."""
    reader: Callable[[str], Any] | None = None

    def dynamic_blocks(address: str) -> Any:
        nonlocal reader
        if reader is None:
            from pathlib import Path

            from policies.tfsource import dynamic_blocks_reader

            reader = dynamic_blocks_reader(doc, Path(root))
        return reader(address)

    return dynamic_blocks


def load_plan(path: str | Path, tf_root: Path | None = None) -> Plan:
    """Read, detect and normalise one plan file (a Terraform plan's sources: ``tf_root``, else
    the plan file's own directory).

    The cyclic garbage collector is paused meanwhile: parsing allocates millions of acyclic
    containers, and the collector rescanning them made a 100k-resource plan 2-3x slower.
    """
    origin = shown_name(path)  # `-` (standard input) is shown as <stdin>
    with paused_gc():
        return parse_document(read_json(path, origin), origin,
                              None if is_stream(path) else tf_root or _beside(path),
                              from_json=True)


def _beside(path: str | Path) -> str:
    """The directory of a plan file, as ``Path(path).parent`` names it (without pathlib)."""
    return os.path.dirname(path) or "."


def is_stream(path: str | Path) -> bool:
    """Standard input (``-``) or a FIFO (``<(helm template …)``, ``mkfifo``): read only once,
    so the format is told from the bytes read, not from a peek."""
    if str(path) == STDIN:
        return True
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def is_plan_json(path: str | Path) -> bool:
    """Does the file start like a JSON object (a plan, or a Kubernetes object as JSON)?
    Anything else that is not a directory is read as YAML: Kubernetes manifests."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return True  # missing (or not to be looked at): let the plan reader name the problem
    if stat.S_ISDIR(mode):
        return False
    if not stat.S_ISREG(mode):
        return True  # a device or socket: the plan reader says what is wrong with it
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return True  # let the plan reader say what is wrong with it
    return looks_like_json(head)


def _read_stream(name: str) -> tuple[str, Any]:
    """Standard input or a FIFO, read once; its format told by content. Returns ("json", the
    parsed document) or ("yaml", the YAML documents: Kubernetes manifests)."""
    shown = shown_name(name)  # `-` (standard input) is shown as <stdin>
    raw = read_input(name, shown)
    if looks_like_json(raw):
        with paused_gc():
            return "json", parse_json_bytes(raw, shown)
    from pathlib import Path

    from policies.sources import hints, kubernetes

    hint = hints.text_hint(Path(name), raw[:65536], shown)
    if hint is not None:  # `terraform show tfplan | gpupool check -`
        raise problem(hint)
    return "yaml", kubernetes.parse_documents(raw, shown)


def _text_hint(path: Path, shown: str) -> str | None:
    """:func:`hints.text_hint` on a file's first 64 KiB (None when it cannot be read: the
    manifest reader then says why)."""
    from policies.sources import hints

    try:
        with path.open("rb") as f:
            head = f.read(65536)
    except OSError:
        return None
    return hints.text_hint(path, head, shown)


def _dir_entries(name: str) -> list[tuple[Path, str]]:
    """The manifest and JSON files of a directory (or the file itself); a directory of Terraform
    configuration without any gets the line that says what to run."""
    from pathlib import Path

    from policies.sources import hints, kubernetes

    try:
        return kubernetes.manifest_files(Path(name), name)
    except InputError:
        hint = hints.directory_hint(Path(name), name) if Path(name).is_dir() else None
        if hint is not None:
            raise problem(hint) from None
        raise


def load_plans(paths: Sequence[str], tf_root: Path | None = None) -> list[Plan]:
    """Every input of a check: plan files one plan each, and every Kubernetes manifest (YAML
    files, directories, JSON objects) together as ONE plan, as ``kubectl apply -f a -f b``
    applies them together. Raises one InputError listing every problem of every input.
    A Terraform plan's sources are in ``tf_root``, else beside the plan file (none for a
    stream)."""
    plans: list[Plan] = []
    problems: list[str] = []
    manifests: list[Manifest] = []
    manifest_paths: list[str] = []
    for name in paths:
        try:
            shown = shown_name(name)  # `-` (standard input) is shown as <stdin>
            stream = is_stream(name)
            if stream or is_plan_json(name):
                if stream:
                    form, doc = _read_stream(name)
                    if form == "yaml":  # Kubernetes manifests (kubectl/helm template output)
                        manifests.extend(_manifests_of(doc, shown))
                        manifest_paths.append(shown)
                        continue
                else:
                    with paused_gc():
                        doc = read_json(name, shown)
                if is_k8s_object(doc):
                    manifests.extend(_manifests_of(doc, shown, single=True))
                    manifest_paths.append(shown)
                else:
                    root = tf_root if stream else tf_root or _beside(name)
                    with paused_gc():
                        plans.append(parse_document(doc, shown, root, from_json=True))
                continue
            scanned = os.path.isdir(name)
            for path, shown in _dir_entries(name):
                try:  # every bad file of a directory is reported, not only the first
                    hint = None if scanned else _text_hint(path, shown)
                    if hint is not None:
                        raise problem(hint)
                    if scanned and path.suffix == ".json":  # a plan in the tree is a plan
                        with paused_gc():
                            doc = read_json(path, shown)
                        if not is_k8s_object(doc):
                            plans.append(parse_document(doc, shown, tf_root or path.parent,
                                                        from_json=True))
                            continue
                        manifests.extend(_manifests_of(doc, shown, single=True))
                    else:
                        from policies.sources.kubernetes import read_manifests

                        manifests.extend(read_manifests(path, shown))
                except InputError as e:
                    problems += e.problems
            manifest_paths.append(name)
        except InputError as e:
            problems += e.problems
        except Exception as e:  # a reader bug must still not pass, nor print a traceback
            if os.environ.get("GPUPOOL_DEBUG"):
                raise
            problems.append(f"{name}: could not read the plan ({type(e).__name__}: {e})")
    if manifests and not problems:
        from policies.sources.kubernetes import plan_of

        try:
            plans.append(plan_of(manifests, ", ".join(manifest_paths)))
        except InputError as e:
            problems += e.problems
    if problems:
        raise InputError(problems)
    return plans


def _manifests_of(doc: Any, shown: str, single: bool = False) -> list[Manifest]:
    """The manifests of parsed YAML documents (``single``: one JSON object, a document)."""
    from policies.sources import kubernetes

    docs = [kubernetes.YamlDocument(0, 1, doc)] if single else doc
    return kubernetes.manifests_of(docs, shown)


__all__ = [
    "GPUPOOL_PLAN", "KUBERNETES", "PULUMI_EVENTS", "PULUMI_PREVIEW", "TERRAFORM", "detect",
    "load_plan", "load_plans", "parse_document",
]
