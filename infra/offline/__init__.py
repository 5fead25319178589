"""The offline plan: the Pulumi program under the mock runtime, data sources from fixtures."""

from infra.offline.fixtures import Fixture, UnansweredCall, load_fixture
from infra.offline.plan import PLAN_KIND, PLAN_VERSION, OfflinePlan, PlannedResource
from infra.offline.runner import OfflineError, run_offline, run_program

__all__ = [
    "PLAN_KIND",
    "PLAN_VERSION",
    "Fixture",
    "OfflineError",
    "OfflinePlan",
    "PlannedResource",
    "UnansweredCall",
    "load_fixture",
    "run_offline",
    "run_program",
]
