"""Reading a plan tests change kinds and resource kinds against module constants, counted.

On Python 3.11 ``ChangeKind.DELETE`` is a Python-level call (``EnumType`` defines
``__getattr__``, so every class attribute read takes the slow hook), ~10x a global. The readers
test each step's or resource's kinds, so they bind the members once at import: reading the
bench's fleet of 200 resources reads exactly as many members through their class as reading
100 (none per resource).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from policies.model import ChangeKind
from policies.sources import load_plan


@pytest.mark.parametrize("generator", ["gen_preview", "gen_tfplan"])
def test_reading_a_plan_reads_no_enum_member_through_its_class_per_resource(
        generator: str, bench_plan: Callable[[str, int], Path],
        enum_reads: Callable[[], AbstractContextManager[Counter[str]]]) -> None:
    paths = {n: bench_plan(generator, n) for n in (100, 200)}
    for path in paths.values():
        load_plan(path)  # the readers imported (their module-level reads)
    reads: dict[int, Counter[str]] = {}
    kinds: dict[int, set[ChangeKind]] = {}
    for n, path in paths.items():
        with enum_reads() as reads[n]:
            plan = load_plan(path)
        assert len(plan.changes) >= n
        kinds[n] = {c.change for c in plan.changes}
    assert len(kinds[200]) >= 2  # the fleet has several change kinds, each tested per resource
    assert reads[200] == reads[100], reads[200] - reads[100]
