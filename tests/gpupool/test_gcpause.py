"""``paused_gc``: the collector is off inside the block and as it was after, whatever happens."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from gpupool.gcpause import paused_gc


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def test_off_inside_on_after() -> None:
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_restored_after_an_exception() -> None:
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("a bad plan")
    assert gc.isenabled()


def test_nested_pauses_restore_once_outermost_ends() -> None:
    with paused_gc():
        with paused_gc():
            pass
        assert not gc.isenabled()  # the inner block must not switch it back on
    assert gc.isenabled()


def test_a_caller_that_had_it_off_keeps_it_off() -> None:
    gc.disable()
    with paused_gc():
        pass
    assert not gc.isenabled()
