"""Run the Pulumi program in-process under the mock runtime and collect an :class:`OfflinePlan`.

The program runs exactly as the Python language host runs it (``run_in_stack`` on a fresh event
loop), against :class:`RecordingMonitor` instead of the engine. Every run happens in a new
``contextvars.Context`` with every Pulumi runtime setting set afresh, so several stacks planned in
one process share nothing (Pulumi keeps its settings, root stack and config in context vars).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gpupool.config import LoadedStack
from gpupool.config.messages import REGION_KEY
from gpupool.envelope import stack_envelope
from gpupool.errors import InputError
from gpupool.yamlio import read_yaml
from infra.offline.fixtures import FIXTURES_ENV, Fixture, NoFixture, UnansweredCall, load_fixture
from infra.offline.monitor import FixtureMocks, Recording, RecordingEngine, RecordingMonitor
from infra.offline.plan import OfflinePlan, PlannedResource, tree_order

DEFAULT_PROJECT = "gpupool"


class OfflineError(InputError):
    """The program could not be planned offline (unanswered call, or it stopped with an error)."""


def project_name(stack_file: Path) -> str:
    """The ``name`` of the Pulumi.yaml governing a stack file (its folder or one above)."""
    for folder in (stack_file.parent, *stack_file.resolve().parent.parents[:2]):
        project = folder / "Pulumi.yaml"
        if project.is_file():
            try:
                doc = read_yaml(project) or {}
            except InputError:  # the stack's own checks report a broken Pulumi.yaml
                break
            name = doc.get("name") if isinstance(doc, dict) else None
            return str(name) if name else DEFAULT_PROJECT
    return DEFAULT_PROJECT


def run_program(
    program: Callable[[], None],
    *,
    project: str,
    stack: str,
    fixture: Fixture,
    config: Mapping[str, Any] | None = None,
    preview: bool = True,
    recording: Recording | None = None,
) -> Recording:
    """Run ``program`` as a Pulumi program; ``config`` is the engine's flat config mapping.

    Raises :class:`UnansweredCall` when the program asked for data the fixture does not hold,
    or whatever the program raised; pass ``recording`` to see what was registered until then.
    """
    recording = recording if recording is not None else Recording()
    context = contextvars.Context()
    context.run(_run, program, project, stack, fixture, dict(config or {}), preview, recording)
    return recording


def _run(
    program: Callable[[], None],
    project: str,
    stack: str,
    fixture: Fixture,
    config: dict[str, Any],
    preview: bool,
    recording: Recording,
) -> None:
    from google.protobuf import empty_pb2
    from pulumi.runtime import config as runtime_config
    from pulumi.runtime import settings
    from pulumi.runtime.mocks import MockSettings
    from pulumi.runtime.stack import run_in_stack

    monitor = RecordingMonitor(FixtureMocks(fixture, recording), project=project, stack=stack)
    runtime_config.CONFIG.set(config)
    runtime_config._SECRET_KEYS.set(set())
    settings.configure(
        MockSettings(
            monitor=monitor,
            monitor_features=set(monitor.GetDeploymentInfo(empty_pb2.Empty()).supportedFeatures),
            engine=RecordingEngine(recording),
            project=project,
            stack=stack,
            root_directory=str(Path.cwd()),
            organization="organization",
            dry_run=preview,
            parallel=None,
            legacy_apply_enabled=False,
            outputs=set(),
            lock=threading.Lock(),
            package_refs={},
            base_providers_by_ref={},
            callbacks=None,
        )
    )
    settings.ROOT.set(None)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    error: BaseException | None = None
    try:
        loop.run_until_complete(run_in_stack(program))
    except Exception as e:  # judged below, after the failures the monitor recorded
        error = e
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
        asyncio.set_event_loop(None)
    if recording.failures:
        raise UnansweredCall(recording.failures[0]) from error
    if error is not None:
        raise error


def stack_program(loaded: LoadedStack) -> Callable[[], None]:
    """What ``infra/__main__.py`` does after validation, for an already loaded stack."""

    def program() -> None:
        import pulumi

        from infra.program import define_stack

        for key, value in define_stack(loaded.config, loaded.instance_types,
                                       loaded.tiers).items():
            pulumi.export(key, value)

    return program


def kubernetes_program(loaded: LoadedStack) -> Callable[[], None]:
    """Only the stack's Kubernetes pools, as ``define_stack`` declares them (``gpupool render``:
    the same objects, without importing or declaring the AWS side)."""

    def program() -> None:
        from infra.k8s.stack import define_kubernetes

        define_kubernetes(loaded.config)

    return program


def run_offline(loaded: LoadedStack, *, fixture: Fixture | None = None,
                kubernetes_only: bool = False) -> OfflinePlan:
    """Plan a validated stack offline; problems become :class:`OfflineError` lines.

    ``kubernetes_only``: run only the Kubernetes pools' part of the program (its resources are
    then the only ones in the plan, and the plan has no outputs): what ``render`` needs.
    """
    import pulumi

    where = str(loaded.path)
    try:
        fixture = fixture or load_fixture(loaded.config.region)
        recording = run_program(
            kubernetes_program(loaded) if kubernetes_only else stack_program(loaded),
            project=project_name(loaded.path),
            stack=loaded.name,
            fixture=fixture,
            config=loaded.flat,
        )
    except NoFixture as e:
        raise OfflineError(
            f"{where}: {REGION_KEY}: expected a region the offline plan answers, got {e.region} "
            f"({e}); record its zones with `python -m infra.offline.record --region {e.region} "
            f"--output-dir DIR` and set {FIXTURES_ENV}=DIR") from None
    except UnansweredCall as e:
        raise OfflineError(f"{where}: offline plan: {e}") from None
    except pulumi.RunError as e:
        raise OfflineError([f"{where}: {line}" for line in str(e).splitlines()]) from None
    resources = [
        PlannedResource(
            urn=r.urn,
            type=r.type,
            name=r.name,
            parent=r.parent,
            custom=r.custom,
            inputs=r.inputs,
            property_dependencies=r.property_dependencies,
            custom_timeouts=r.custom_timeouts,
        )
        for r in recording.registrations
    ]
    return OfflinePlan(
        stack=loaded.name,
        project=project_name(loaded.path),
        region=loaded.config.region,
        resources=tree_order(resources),
        outputs=recording.outputs,
        envelope=stack_envelope(loaded.config, loaded.instance_types, tiers=loaded.tiers),
        fixture=fixture.origin,
        diagnostics=tuple(recording.diagnostics),
        placeholders=tuple(sorted(set(recording.placeholders))),
    )
