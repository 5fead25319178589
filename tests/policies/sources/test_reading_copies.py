"""policies.sources.reading: a plan's bytes are not copied to tell whether the file is blank.

``raw.strip()`` copied the whole plan (1.4 MB for 1,000 Terraform resources) when it ended
with a line break, as ``terraform show -json`` and ``pulumi preview --json`` write it.
"""

from __future__ import annotations

import pytest

from gpupool.errors import InputError
from policies.sources.reading import parse_json_bytes

_STRIPPED: list[int] = []


class _Watched(bytes):
    """Bytes that record each strip of the whole input."""

    def strip(self, chars: bytes | None = None) -> bytes:
        _STRIPPED.append(len(self))
        return super().strip(chars)


def test_a_plan_ending_in_a_line_break_is_not_copied_to_check_it_is_blank() -> None:
    _STRIPPED.clear()
    raw = b'{"format_version":"1.2","resource_changes":[]}\n'
    assert parse_json_bytes(_Watched(raw), "plan.json") == {"format_version": "1.2",
                                                             "resource_changes": []}
    assert _STRIPPED == []


@pytest.mark.parametrize("raw", [b"", b" ", b"\n\r\t", b"\x0b\x0c \n"])
def test_blank_input_is_still_an_empty_file(raw: bytes) -> None:
    with pytest.raises(InputError) as err:
        parse_json_bytes(raw, "plan.json")
    assert str(err.value) == "plan.json: expected a JSON plan, got an empty file"
