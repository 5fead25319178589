"""The lists library's sum() and max() in the kit's CEL shim, held to the examples and
semantics of k8s.io/apiserver/pkg/cel/library/lists.go (sum: the elements added in order to
the zero of their type, [] sums to int 0; max: the first greatest element, an error on an
empty list; a list of mixed types has no overload)."""

from __future__ import annotations

from typing import Any

import celpy
import pytest
from celpy import celtypes

from policies.admission.library import FUNCTIONS


def _eval(text: str) -> Any:
    env = celpy.Environment()
    return env.program(env.compile(text), functions=FUNCTIONS).evaluate({})


@pytest.mark.parametrize(("text", "value", "kind"), [
    ("[1, 3].sum()", 4, celtypes.IntType),
    ("[1.0, 3.0].sum()", 4.0, celtypes.DoubleType),
    ("[1u, 2u].sum()", 3, celtypes.UintType),
    ("[].sum()", 0, celtypes.IntType),
    ("([0.0] + []).sum()", 0.0, celtypes.DoubleType),
    ("[0.1, 0.2].sum() == 0.1 + 0.2", True, celtypes.BoolType),  # IEEE, in list order
    ("[duration('1m'), duration('1s')].sum() == duration('61s')", True, celtypes.BoolType),
    ("[1, 3].max()", 3, celtypes.IntType),
    ("[2.0, 1.0, 2.0].max()", 2.0, celtypes.DoubleType),
    ("['a', 'c', 'b'].max()", "c", celtypes.StringType),
    ("([0] + []).max()", 0, celtypes.IntType),
])
def test_sum_and_max_as_the_lists_library(text: str, value: Any, kind: type) -> None:
    got = _eval(text)
    assert got == value and type(got) is kind, (text, got)


@pytest.mark.parametrize("text", [
    "[].max()", "[1, 2.0].sum()", "[1, 2.0].max()", "[9223372036854775807, 1].sum()",
    "['a'].sum()",
])
def test_what_the_lists_library_refuses_is_an_error(text: str) -> None:
    with pytest.raises(celpy.CELEvalError):
        _eval(text)
