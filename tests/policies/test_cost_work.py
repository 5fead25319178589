"""The work cost_lines does per priced resource, and that its cheaper ways say the same."""

from __future__ import annotations

import dis

from hypothesis import given
from hypothesis import strategies as st

from policies import cost

_NOTES = st.sampled_from(["", "max size not set", "old inputs not known",
                          "no recorded price for p4d.24xlarge"]) | st.text(max_size=8)


def _listed(word: str, prices: str, before: str, after: str) -> str:
    """The note as cost_lines built it before: a list of parts, joined."""
    notes = [n for n in (f"before: {before}" if before else "",
                         f"after: {after}" if after else "") if n]
    if before and before == after:
        notes = [before]
    return "; ".join([word, prices, *notes])


@given(st.sampled_from(["create", "update", "delete", "replace"]), st.text(max_size=12),
       _NOTES, _NOTES)
def test_a_lines_note_is_the_joined_parts_it_always_was(word: str, prices: str, before: str,
                                                         after: str) -> None:
    assert cost._note(word, prices, before, after) == _listed(word, prices, before, after)


def test_a_price_is_three_slot_stores_and_holds_its_fields() -> None:
    ops = [i.opname for i in dis.get_instructions(cost._Price.__init__)]
    assert ops.count("STORE_ATTR") == 3
    assert "__setattr__" not in cost._Price.__init__.__code__.co_names
    price = cost._Price(2.5, True, "at max size 2 x g5.xlarge")
    assert (price.per_hour, price.gpu, price.note) == (2.5, True, "at max size 2 x g5.xlarge")
    assert cost._Price(None, False).note == ""
    assert not hasattr(price, "__dict__")
