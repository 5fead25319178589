"""The catalog's answers: the figures the policy rules and the plan's cost envelope rely on."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpupool.catalog import Catalog, InstanceType, load_catalog
from gpupool.catalog.model import catalog_from_document

CATALOG = load_catalog()
TYPES = sorted(t.instance_type for t in CATALOG)
DESIGN_KEYS = {
    "instance_type",
    "gpu_model",
    "gpu_count",
    "gpu_memory_gib",
    "vcpus",
    "memory_gib",
    "arch",
    "network_baseline_gbps",
    "price_per_hour",
    "price_per_gpu_hour",
    "smallest_for_gpu",
}


def row(name: str) -> InstanceType:
    r = CATALOG.get(name)
    assert r is not None, name
    return r


def test_bundled_file_records_its_sources() -> None:
    src = CATALOG.meta["source"]
    assert "DescribeInstanceTypes" in src["instances"]
    assert "moto server" in src["endpoint"]
    assert "127.0.0.1" not in json.dumps(CATALOG.meta)  # no random port in the provenance
    assert src["prices"] and src["prices_generated_at"][:4].isdigit()
    assert CATALOG.meta["price_region"] == "us-east-1"


def test_families_of_the_brief_are_present() -> None:
    families = {t.family for t in CATALOG}
    # g4ad and p3 come from the recorded supplement (moto's DescribeInstanceTypes lacks them).
    assert {"g4dn", "g4ad", "g5", "g5g", "g6", "g6e", "p3", "p4d", "p5"} <= families
    assert all(t.gpu_count > 0 for t in CATALOG)


def test_g4dn_xlarge_is_the_smallest_t4_size() -> None:
    smallest = CATALOG.smallest_for("T4", "x86_64")
    assert smallest is not None and smallest.instance_type == "g4dn.xlarge"
    assert CATALOG.smallest_for("t4") is smallest  # stack files may write the model in any case
    assert CATALOG.is_smallest("g4dn.xlarge")
    assert not CATALOG.is_smallest("g4dn.2xlarge")
    assert CATALOG.smallest_like("g4dn.16xlarge") is smallest


def _was_smallest(catalog: Catalog, name: str) -> bool:
    """is_smallest as it was written before the set: the row is its GPU's smallest row."""
    row = catalog.get(name)
    return row is not None and catalog.smallest_like(name) is row


@pytest.mark.parametrize("region", [None, "us-east-1", "eu-west-1", "ap-northeast-1"])
def test_is_smallest_answers_as_before_for_every_type(region: str | None) -> None:
    catalog = CATALOG if region is None else CATALOG.for_region(region)
    answers = {t: catalog.is_smallest(t) for t in TYPES}
    assert answers == {t: _was_smallest(catalog, t) for t in TYPES}
    assert 0 < sum(answers.values()) < len(TYPES)


@given(rows=st.lists(st.sampled_from(list(CATALOG)), max_size=12),
       names=st.lists(st.one_of(st.sampled_from(TYPES), st.text(max_size=12),
                                st.sampled_from(TYPES).map(str.upper)), max_size=8))
def test_is_smallest_agrees_with_its_gpus_smallest_row(rows: list[InstanceType],
                                                       names: list[str]) -> None:
    """Any catalog (rows repeated too: the last row of a name is the one it answers for) and
    any name: the set says what comparing the rows says."""
    catalog = Catalog(rows, {})
    for name in [*names, *(r.instance_type for r in rows)]:
        assert catalog.is_smallest(name) is _was_smallest(catalog, name), name


def test_is_smallest_makes_no_gpu_key_per_question(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked per resource by the sizing rules: after the first question, a set lookup."""
    catalog = Catalog(list(CATALOG), {})
    made = [0]
    real = InstanceType.gpu_key

    def counted(self: InstanceType) -> object:
        made[0] += 1
        return real.fget(self)  # type: ignore[attr-defined]

    monkeypatch.setattr(InstanceType, "gpu_key", property(counted))
    catalog.is_smallest("g4dn.xlarge")
    made[0] = 0
    assert [catalog.is_smallest(t) for t in ("g4dn.xlarge", "g4dn.2xlarge", "m5.large")] == [
        True, False, False]
    assert made[0] == 0


def test_g4dn_16xlarge_is_one_t4_at_8_27_times_the_price() -> None:
    big, small = row("g4dn.16xlarge"), row("g4dn.xlarge")
    assert (big.gpu_model, big.gpu_count) == ("T4", 1)
    assert (big.price_per_hour, small.price_per_hour) == (4.352, 0.526)
    assert big.price_per_gpu_hour / small.price_per_gpu_hour == pytest.approx(8.27, abs=0.005)


def test_g4dn_12xlarge_is_four_t4_at_0_978_per_gpu_hour() -> None:
    r = row("g4dn.12xlarge")
    assert (r.gpu_model, r.gpu_count, r.price_per_hour) == ("T4", 4, 3.912)
    assert CATALOG.price_per_gpu_hour("g4dn.12xlarge") == pytest.approx(0.978)
    assert r.price_per_gpu_hour > row("g4dn.xlarge").price_per_gpu_hour


def test_g5g_xlarge_is_the_smallest_t4g_on_arm64() -> None:
    smallest = CATALOG.smallest_for("T4g", "arm64")
    assert smallest is not None and smallest.instance_type == "g5g.xlarge"
    assert smallest.arch == "arm64"
    assert CATALOG.smallest_for("T4g", "x86_64") is None
    assert CATALOG.smallest_for("T4", "arm64") is None


@pytest.mark.parametrize(
    ("gpu", "expected"),
    [("A10G", "g5.xlarge"), ("L4", "g6.xlarge"), ("L40S", "g6e.xlarge"), ("H100", "p5.4xlarge")],
)
def test_smallest_whole_gpu_sizes(gpu: str, expected: str) -> None:
    smallest = CATALOG.smallest_for(gpu, "x86_64")
    assert smallest is not None and smallest.instance_type == expected


def test_fractional_l4_slices_are_never_the_answer_for_a_whole_l4() -> None:
    # g6f.large (1/8 of an L4) is cheaper per hour but is not a whole GPU
    assert row("g6f.large").is_partitioned
    smallest = CATALOG.smallest_for("L4")
    assert smallest is not None and not smallest.is_partitioned


def test_p4d_24xlarge_is_the_smallest_a100_40gb() -> None:
    p4d, p4de = row("p4d.24xlarge"), row("p4de.24xlarge")
    assert (p4d.gpu_count, p4d.gpu_memory_gib) == (8, 40)
    assert CATALOG.is_smallest("p4d.24xlarge")
    # an 80 GB A100 is a different accelerator: p4de is the smallest of its own key
    assert p4de.gpu_key != p4d.gpu_key and CATALOG.is_smallest("p4de.24xlarge")


def test_type_changes_and_gpu_capacity() -> None:
    up = CATALOG.gpu_delta("g4dn.xlarge", "g4dn.2xlarge")
    assert up is not None and up.gpu_count_delta == 0 and up.is_vertical_upsize
    assert up.price_delta_per_hour == pytest.approx(0.226)
    assert not CATALOG.adds_gpus("g4dn.xlarge", "g4dn.2xlarge")

    packed = CATALOG.gpu_delta("g4dn.xlarge", "g4dn.12xlarge")
    assert packed is not None and packed.gpu_count_delta == 3 and packed.packs_more_gpus
    assert CATALOG.adds_gpus("g4dn.xlarge", "g4dn.12xlarge")

    other = CATALOG.gpu_delta("g4dn.xlarge", "g5.xlarge")  # T4 → A10G: a GPU change
    assert other is not None and not other.same_gpu and not other.is_vertical_upsize

    assert CATALOG.gpu_delta("g4dn.xlarge", "m5.large") is None  # not a GPU type


def test_unpriced_types_are_none_never_zero() -> None:
    unpriced = [t for t in CATALOG if t.price_per_hour is None]
    assert unpriced, "the recorded price list lacks some types (g7, p5e); they must show as None"
    for t in unpriced:
        assert t.price_per_gpu_hour is None
        assert CATALOG.price_per_gpu_hour(t.instance_type) is None
    for r in CATALOG.rows():
        assert r["price_per_hour"] != 0 and r["price_per_gpu_hour"] != 0
    priced = [t for t in CATALOG if t.price_per_hour is not None]
    # an unpriced type is never chosen over a priced one of the same GPU
    for t in unpriced:
        same = [p for p in priced if p.gpu_key == t.gpu_key]
        if same:
            assert not CATALOG.is_smallest(t.instance_type)


def test_rows_carry_the_design_keys() -> None:
    rows = CATALOG.rows()
    assert len(rows) == len(CATALOG)
    for r in rows:
        assert r.keys() >= DESIGN_KEYS
        assert isinstance(r["smallest_for_gpu"], bool)
    by_type = {r["instance_type"]: r for r in rows}
    assert by_type["g4dn.xlarge"]["smallest_for_gpu"] is True
    assert by_type["g4dn.16xlarge"]["smallest_for_gpu"] is False
    assert by_type["g4dn.xlarge"]["memory_gib"] == 16
    assert by_type["g5g.xlarge"]["network_baseline_gbps"] == 1.25


@given(st.sampled_from(TYPES))
def test_smallest_is_never_beaten_on_price_per_gpu_by_its_own_kind(name: str) -> None:
    smallest = CATALOG.smallest_like(name)
    assert smallest is not None and smallest.gpu_key == row(name).gpu_key
    for other in CATALOG.same_gpu_sizes(name):
        if other.price_per_gpu_hour is not None:
            assert smallest.price_per_gpu_hour is not None
            assert smallest.price_per_gpu_hour <= other.price_per_gpu_hour


@given(st.sampled_from(TYPES), st.sampled_from(TYPES))
def test_gpu_delta_is_antisymmetric(a: str, b: str) -> None:
    ab, ba = CATALOG.gpu_delta(a, b), CATALOG.gpu_delta(b, a)
    assert ab is not None and ba is not None
    assert ab.gpu_count_delta == -ba.gpu_count_delta
    assert ab.same_gpu == ba.same_gpu
    assert not (ab.is_vertical_upsize and ba.is_vertical_upsize)
    if ab.is_vertical_upsize:
        assert ab.gpu_count_delta == 0 and not CATALOG.adds_gpus(a, b)


_price = st.one_of(st.none(), st.floats(0.01, 200, allow_nan=False))


@given(
    st.lists(
        st.tuples(st.sampled_from(["T4", "A10G"]), st.sampled_from([1, 2, 4, 8]), _price),
        min_size=1,
        max_size=12,
    )
)
def test_smallest_choice_on_arbitrary_catalogs(specs: list[tuple[str, int, float | None]]) -> None:
    """Whatever the prices, the chosen size is the cheapest per GPU, and priced beats unpriced."""
    types = [
        {
            "instance_type": f"x{i}.{n}xlarge",
            "family": f"x{i}",
            "size": f"{n}xlarge",
            "vcpus": 4 * n,
            "memory_mib": 16384 * n,
            "gpu_maker": "NVIDIA",
            "gpu_model": model,
            "gpu_count": n,
            "gpu_memory_mib": 16384,
            "arch": "x86_64",
            "network_baseline_gbps": 5.0,
            "network_burst_gbps": 25.0,
            "efa_supported": False,
            "price_per_hour": price,
        }
        for i, (model, n, price) in enumerate(specs)
    ]
    cat: Catalog = catalog_from_document({"types": types})
    for model in {m for m, _, _ in specs}:
        chosen = cat.smallest_for(model)
        assert chosen is not None
        prices = [t.price_per_gpu_hour for t in cat if t.gpu_model == model]
        known = [p for p in prices if p is not None]
        if known:
            assert chosen.price_per_gpu_hour == min(known)
        else:
            assert chosen.price_per_gpu_hour is None


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="pgrPG0123456789\u0663\u00b2.x-", max_size=5))
def test_a_gpu_family_name_is_the_pattern_it_was(text: str) -> None:
    """names_gpu_family reads as ``re.match(r"(p|g|gr)\\d", text)`` did (the pattern the catalog
    and Karpenter's allowed types were judged by; not compiled at import any more), Unicode
    digits (\\u0663) and superscripts (\\u00b2, not decimal) included."""
    import re

    from gpupool.catalog.model import names_gpu_family

    assert names_gpu_family(text) == (re.match(r"(p|g|gr)\d", text) is not None), text
