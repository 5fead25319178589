"""Remote-GPU tiers in stack files (``gpupool:remoteGpu``): sizing by GPU and by bandwidth,
and every problem at once, one line each, naming the key."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from gpupool.catalog.network import NetworkKind
from gpupool.config import parse_flat_config
from gpupool.config.loader import resolve_tiers
from gpupool.config.remote_gpu import RTT_CEILING_US, tag_number
from gpupool.errors import InputError
from gpupool.remoting import load_profile, predicted_overhead, rtt_max_us
from gpupool.tags import CLIENTS_TAG, MAX_RTT_TAG, MIN_GBPS_TAG

ROOT = Path(__file__).resolve().parents[2]


def stack(*tiers: dict[str, Any]) -> dict[str, Any]:
    return {
        "aws:region": "us-east-1",
        "gpupool:environment": "staging",
        "gpupool:team": "ml",
        "gpupool:costCenter": "cc-1",
        "gpupool:network": {"createVpc": True},
        "gpupool:pools": [{"name": "inference", "gpu": "T4", "maxSize": 2}],
        "gpupool:remoteGpu": list(tiers),
    }


def tier(**over: Any) -> dict[str, Any]:
    return {"name": "bert", "gpu": "T4", "minSize": 1, "maxSize": 4, "port": 18515,
            "budget": {"minGbps": 4, "maxRttUs": 200}, **over}


IN_GROUP = {"clientsInPlacementGroup": True}  # the services using the tier launch into its group


def problems(flat: dict[str, Any]) -> list[str]:
    with pytest.raises(InputError) as info:
        parse_flat_config(flat, "s.yaml")
    return info.value.problems


def test_a_stack_without_tiers_is_unchanged() -> None:
    flat = stack()
    del flat["gpupool:remoteGpu"]
    config, _ = parse_flat_config(flat, "s.yaml")
    assert config.remote_gpu == [] and resolve_tiers(config) == {}


def test_a_stack_of_tiers_alone_needs_no_plain_pool() -> None:
    """A team's CPU services and their proxies (new-stack's remote-gpu-client template)."""
    flat = stack(tier())
    flat["gpupool:pools"] = []
    config, resolved = parse_flat_config(flat, "s.yaml")
    assert config.pools == [] and resolved == {}
    assert resolve_tiers(config)["bert"].proxy.instance_type == "g4dn.xlarge"


def test_a_stack_with_nothing_to_run_is_refused() -> None:
    flat = stack()
    flat["gpupool:pools"] = []
    assert problems(flat) == ["s.yaml: gpupool:pools: expected at least one pool (or a remoteGpu "
                              "tier or kubernetes pool), got none"]


@pytest.mark.parametrize(("gpu", "arch", "min_gbps", "proxy", "why"), [
    ("T4", "x86_64", 4, "g4dn.xlarge", "smallest size for T4"),
    ("T4", "x86_64", 8, "g4dn.2xlarge", "bandwidth, not GPU: g4dn.xlarge's baseline 5 Gbps"),
    ("T4g", "arm64", 5, "g5g.4xlarge", "bandwidth, not GPU: g5g.xlarge's baseline 1.25 Gbps"),
    ("A10G", "x86_64", 2.5, "g5.xlarge", "smallest size for A10G"),
])
def test_proxy_is_the_smallest_size_the_budget_allows(
        gpu: str, arch: str, min_gbps: float, proxy: str, why: str) -> None:
    config, _ = parse_flat_config(stack(tier(gpu=gpu, arch=arch, budget={
        "minGbps": min_gbps, "maxRttUs": 200}, **IN_GROUP)), "s.yaml")
    [resolved] = resolve_tiers(config).values()
    assert resolved.proxy.instance_type == proxy
    assert why in resolved.why
    assert resolved.kind is NetworkKind.TCP and resolved.flow_gbps >= min_gbps
    assert resolved.budget_tags() == {MIN_GBPS_TAG: tag_number(min_gbps), MAX_RTT_TAG: "200",
                                      CLIENTS_TAG: "in-group"}


def test_clients_outside_the_placement_group_get_5_gbps_per_flow() -> None:
    """Issue 16 item 16: no client group and no promise, so the clients are outside the tier's
    cluster placement group and one TCP flow is capped at 5 Gbps, not 10."""
    config, _ = parse_flat_config(stack(tier(budget={"minGbps": 5, "maxRttUs": 200})), "s.yaml")
    [resolved] = resolve_tiers(config).values()
    assert (resolved.proxy.instance_type, resolved.flow_gbps) == ("g4dn.xlarge", 5)
    assert not resolved.clients_in_group and resolved.budget_tags()[CLIENTS_TAG] == "outside"
    assert resolved.network_text == ("TCP over ENA to clients outside the placement group, 5 Gbps "
                                     "per flow, clients outside the tier's placement group")
    # 8 Gbps: g4dn.2xlarge's 10 Gbps baseline would carry it, one flow from outside does not
    assert problems(stack(tier(budget={"minGbps": 8, "maxRttUs": 200}))) == [
        "s.yaml: gpupool:remoteGpu[0].budget.minGbps: expected at most 5 Gbps: one flow of TCP "
        "over ENA to clients outside the placement group is capped at 5 Gbps (g4dn.2xlarge has "
        "10 Gbps baseline), got 8; clients in the tier's placement group get 10 Gbps per flow "
        "(declare clients, or set clientsInPlacementGroup: true where the services using the "
        "tier launch into its placement group); ENA Express (25 Gbps per flow) needs a type "
        "that supports it at both ends, EFA a type with EFA"]


@pytest.mark.parametrize("where", [
    {"clients": {"instanceType": "c6in.2xlarge", "maxSize": 2}},
    {"clients": {"instanceType": "c6in.2xlarge", "maxSize": 2}, "clientsInPlacementGroup": True},
    IN_GROUP,
])
def test_clients_in_the_placement_group_get_10_gbps_per_flow(where: dict[str, Any]) -> None:
    config, _ = parse_flat_config(stack(tier(budget={"minGbps": 8, "maxRttUs": 200}, **where)),
                                  "s.yaml")
    [resolved] = resolve_tiers(config).values()
    assert (resolved.proxy.instance_type, resolved.flow_gbps) == ("g4dn.2xlarge", 10)
    assert resolved.clients_in_group and resolved.budget_tags()[CLIENTS_TAG] == "in-group"
    assert "in the tier's placement group" in resolved.clients_text


def test_the_client_groups_own_baseline_bounds_every_flow() -> None:
    """The other end of the flow: a client group's type must carry the budget too (its
    baseline, never its 'up to' burst)."""
    slow = {"instanceType": "c7i.xlarge", "maxSize": 2}  # 1.562 Gbps baseline, up to 12.5
    assert problems(stack(tier(budget={"minGbps": 4, "maxRttUs": 200}, clients=slow))) == [
        "s.yaml: gpupool:remoteGpu[0].clients.instanceType: expected a client type whose "
        "baseline carries the budget's 4 Gbps per flow, got c7i.xlarge (1.562 Gbps baseline; its "
        "'up to' burst does not count); c6in.xlarge (6.25 Gbps baseline) is the least x86_64 "
        "client baseline that carries it"]
    arm = {"instanceType": "c7g.large", "maxSize": 2}
    line = problems(stack(tier(budget={"minGbps": 8, "maxRttUs": 200}, clients=arm)))[0]
    assert line.endswith("c7gn.xlarge (12.5 Gbps baseline) is the least arm64 client baseline "
                         "that carries it")
    # a profile: embeddings needs 3.75 Gbps per flow, which c7i.xlarge's side cannot carry
    flat = stack(tier(budget={"profile": "stacks/profiles/embeddings.yaml"}, clients=slow))
    with pytest.raises(InputError) as info:
        parse_flat_config(flat, "s.yaml", base_dir=ROOT)
    assert info.value.problems == [
        "s.yaml: gpupool:remoteGpu[0].clients.instanceType: expected a client type whose "
        "baseline carries the budget's 3.75 Gbps per flow, got c7i.xlarge (1.562 Gbps baseline; "
        "its 'up to' burst does not count); c6in.xlarge (6.25 Gbps baseline) is the least x86_64 "
        "client baseline that carries it"]
    # a client below the proxy's side sets the flow, and so the round trip the budget allows
    fast = {"instanceType": "c6in.xlarge", "maxSize": 2}  # 6.25 Gbps, under g4dn.2xlarge's 10
    config, _ = parse_flat_config(stack(tier(budget={"minGbps": 6, "maxRttUs": 200},
                                             clients=fast)), "s.yaml")
    [resolved] = resolve_tiers(config).values()
    assert (resolved.proxy.instance_type, resolved.flow_gbps) == ("g4dn.2xlarge", 6.25)


def test_a_client_group_is_always_in_the_placement_group() -> None:
    assert problems(stack(tier(clients={"instanceType": "c6in.2xlarge", "maxSize": 2},
                               clientsInPlacementGroup=False))) == [
        "s.yaml: gpupool:remoteGpu[0].clientsInPlacementGroup: expected true or no value: the "
        "tier launches its client group (clients) into its placement group, got false"]
    config, _ = parse_flat_config(stack(tier(clientsInPlacementGroup=False)), "s.yaml")
    assert not config.remote_gpu[0].clients_in_group


def test_ena_express_where_both_ends_support_it() -> None:
    flat = stack(tier(gpu="H100", budget={"minGbps": 20, "maxRttUs": 100},
                      clients={"instanceType": "c6in.8xlarge", "maxSize": 2}))
    config, _ = parse_flat_config(flat, "s.yaml")
    [resolved] = resolve_tiers(config).values()
    assert resolved.proxy.instance_type == "p5.4xlarge"
    assert resolved.kind is NetworkKind.ENA_EXPRESS and resolved.flow_gbps == 25
    assert resolved.ena_express and resolved.client_type == "c6in.8xlarge"
    # a client without ENA Express: one TCP flow caps at 10 Gbps, below the 20 asked
    flat = stack(tier(gpu="H100", budget={"minGbps": 20, "maxRttUs": 100},
                      clients={"instanceType": "c7i.large", "maxSize": 2}))
    [line] = problems(flat)
    assert line.startswith("s.yaml: gpupool:remoteGpu[0].budget.minGbps: expected at most 10 "
                           "Gbps: one flow of TCP over ENA in a cluster placement group is capped")


def test_every_problem_at_once_with_the_key_named() -> None:
    flat = stack(
        tier(),
        tier(name="inference", minSize=3, maxSize=2, port=80,
             budget={"minGbps": 5, "maxRttUs": 10, "burst": 1},
             clients={"instanceType": "g4dn.xlarge", "maxSize": 2}),
        tier(name="fast", gpu="L4", budget={"minGbps": 12, "maxRttUs": 100}, **IN_GROUP),
        tier(name="near", gpu="L4", budget={"minGbps": 1, "maxRttUs": 20}),
        tier(name="huge", gpu="A10G", budget={"minGbps": 26, "maxRttUs": 100}),
        tier(name="typo", gpu="T5"),
    )
    lines = problems(flat)
    # the model list follows the catalog; what matters is the key and the suggestion
    assert lines[-1].startswith("s.yaml: gpupool:remoteGpu[5].gpu: expected a GPU model or "
                                "family available on x86_64, got 'T5' (did you mean T4?")
    assert lines[:-1] == [
        "s.yaml: gpupool:remoteGpu[1].port: expected at least 1024, got 80",
        "s.yaml: gpupool:remoteGpu[1].budget.burst: expected a known key, not this one "
        "(known: profile, maxOverhead, minGbps, maxRttUs)",
        "s.yaml: gpupool:remoteGpu[1].clients.instanceType: expected a CPU instance type of a "
        "client family (c6in, c7a, c7g, c7gn, c7i, m7a, m7g, m7i), got 'g4dn.xlarge': it "
        "carries a GPU, and clients are CPU-only",
        "s.yaml: gpupool:remoteGpu[1].minSize: expected at most maxSize (2), got 3",
        "s.yaml: gpupool:remoteGpu[1].name: expected a name no pool or tier uses, "
        "'inference' is",
        "s.yaml: gpupool:remoteGpu[2].budget.minGbps: expected at most 10 Gbps: one flow of TCP "
        "over ENA in a cluster placement group is capped at 10 Gbps (g6.8xlarge has 25 Gbps "
        "baseline), got 12; ENA Express (25 Gbps per flow) needs a type that supports it at "
        "both ends, EFA a type with EFA",
        "s.yaml: gpupool:remoteGpu[3].budget.maxRttUs: expected at least 30 µs, the least round "
        "trip TCP over ENA in a cluster placement group reaches, got 20; EFA (~15 µs) would "
        "meet it",
        "s.yaml: gpupool:remoteGpu[4].budget.minGbps: expected at most 25 Gbps, the highest "
        "baseline of any A10G size (g5.8xlarge), got 26; a faster GPU model's sizes may carry "
        "more",
    ]


def test_a_tier_needs_a_budget_and_a_port() -> None:
    t = tier()
    del t["budget"], t["port"]
    assert problems(stack(t)) == [
        "s.yaml: gpupool:remoteGpu[0].port: expected a value: this key is required",
        "s.yaml: gpupool:remoteGpu[0].budget: expected a value: this key is required",
    ]


def test_the_engine_hands_tiers_over_as_json_text() -> None:
    flat = stack(tier())
    flat["gpupool:remoteGpu"] = json.dumps(flat["gpupool:remoteGpu"])
    config, _ = parse_flat_config(flat, "stack staging")
    assert config.remote_gpu[0].budget.min_gbps == 4


@pytest.mark.parametrize(("value", "shown"), [(8.0, "8"), (4.2500001, "4.25"), (0.5, "0.5"),
                                                (0.0, "0"), (1e6, "1000000"), (43.300000000000004,
                                                                              "43.3")])
def test_tag_numbers(value: float, shown: str) -> None:
    assert tag_number(value) == shown


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, -1.0])
def test_no_tag_says_inf_or_nan(value: float) -> None:
    with pytest.raises(ValueError, match="finite"):
        tag_number(value)


# --------------------------------------------------------------------------- from a profile


@pytest.mark.parametrize(("profile", "proxy", "min_gbps", "max_rtt"), [
    ("stacks/profiles/embeddings.yaml", "g4dn.xlarge", 3.75, 43.3),
    ("stacks/profiles/llm-decode.yaml", "g4dn.2xlarge", 6.4, 41.7),
])
def test_budget_derived_from_a_profile(profile: str, proxy: str, min_gbps: float,
                                       max_rtt: float) -> None:
    flat = stack(tier(budget={"profile": profile}, **IN_GROUP))
    config, _ = parse_flat_config(flat, "s.yaml", base_dir=ROOT)
    [resolved] = resolve_tiers(config, base_dir=ROOT).values()
    assert resolved.proxy.instance_type == proxy
    assert (resolved.min_gbps, resolved.max_rtt_us) == pytest.approx((min_gbps, max_rtt))
    assert resolved.budget_source.startswith(f"profile {profile} (")
    # the figures are the model's own, rounded to the safe side
    p = load_profile(ROOT / profile)
    assert predicted_overhead(p, resolved.rtt_floor_us, resolved.flow_gbps) <= 0.05
    assert predicted_overhead(p, resolved.rtt_floor_us, resolved.min_gbps) <= 0.05 + 1e-9
    assert resolved.max_rtt_us <= rtt_max_us(p, resolved.flow_gbps, 0.05) + 1e-6  # type: ignore[operator]
    assert resolved.predicted_overhead == pytest.approx(
        predicted_overhead(p, resolved.rtt_floor_us, resolved.flow_gbps))


def test_a_profile_sized_for_clients_outside_the_group() -> None:
    """Prod's llm-decode profile needs 6.4 Gbps per flow: clients in the group get it on
    g4dn.2xlarge (10), clients outside get 5 on every T4 size, so the tier cannot be built;
    embeddings (3.75 Gbps) fits 5 Gbps either way, with the same figures."""
    flat = stack(tier(budget={"profile": "stacks/profiles/llm-decode.yaml"}))
    with pytest.raises(InputError) as info:
        parse_flat_config(flat, "s.yaml", base_dir=ROOT)
    [line] = info.value.problems
    assert line.startswith(
        "s.yaml: gpupool:remoteGpu[0].budget.profile: expected a profile some T4 size serves "
        "within maxOverhead 0.05: at best, g4dn.xlarge over TCP over ENA to clients outside the "
        "placement group (5 Gbps per flow, ~30 µs round trip), llm-decode runs ")
    assert line.endswith(
        " % slower; with the clients in the tier's placement group (clients, or "
        "clientsInPlacementGroup: true) g4dn.2xlarge gets 10 Gbps per flow and serves it; or make "
        "calls asynchronous, shadow them, or keep the GPU local")
    flat = stack(tier(budget={"profile": "stacks/profiles/embeddings.yaml"}))
    config, _ = parse_flat_config(flat, "s.yaml", base_dir=ROOT)
    outside = resolve_tiers(config, base_dir=ROOT)["bert"]
    flat = stack(tier(budget={"profile": "stacks/profiles/embeddings.yaml"}, **IN_GROUP))
    config, _ = parse_flat_config(flat, "s.yaml", base_dir=ROOT)
    inside = resolve_tiers(config, base_dir=ROOT)["bert"]
    assert (outside.min_gbps, outside.max_rtt_us) == (inside.min_gbps, inside.max_rtt_us)
    assert outside.budget_tags()[CLIENTS_TAG] == "outside"
    assert inside.budget_tags()[CLIENTS_TAG] == "in-group"


def test_a_looser_overhead_keeps_the_smallest_size() -> None:
    flat = stack(tier(budget={"profile": "stacks/profiles/llm-decode.yaml", "maxOverhead": 0.1}))
    config, _ = parse_flat_config(flat, "s.yaml", base_dir=ROOT)
    assert resolve_tiers(config, base_dir=ROOT)["bert"].proxy.instance_type == "g4dn.xlarge"


def test_profile_problems_are_one_line_each_naming_both_files(tmp_path: Path) -> None:
    (tmp_path / "slow.yaml").write_text(
        "name: slow\nlocal_time_s: 1\nsync_calls: 100000\nbytes_to_gpu: 1e9\n"
        "bytes_from_gpu: 0\n")
    (tmp_path / "bad.yaml").write_text("name: bad\nlocal_time_s: -1\n")
    flat = stack(tier(budget={"profile": "slow.yaml"}, **IN_GROUP),
                 tier(name="bb", budget={"profile": "bad.yaml"}),
                 tier(name="cc", budget={"profile": "none.yaml"}),
                 tier(name="dd", budget={"profile": "slow.yaml", "minGbps": 1}),
                 tier(name="ee", budget={"minGbps": 1}))
    with pytest.raises(InputError) as info:
        parse_flat_config(flat, "s.yaml", base_dir=tmp_path)
    lines = info.value.problems
    assert lines[0] == (
        "s.yaml: gpupool:remoteGpu[0].budget.profile: expected a profile some T4 size serves "
        "within maxOverhead 0.05: at best, g4dn.2xlarge over TCP over ENA in a cluster placement "
        "group (10 Gbps per flow, ~30 µs round trip), slow runs 380.0 % slower; make calls "
        "asynchronous, shadow them, or keep the GPU local")
    assert lines[1].startswith(
        f"s.yaml: gpupool:remoteGpu[1].budget.profile: expected a valid application profile "
        f"({tmp_path}/bad.yaml: local_time_s: expected at least 1e-06, got -1")
    assert lines[2] == (f"s.yaml: gpupool:remoteGpu[2].budget.profile: expected a valid "
                        f"application profile ({tmp_path}/none.yaml: no such file)")
    assert lines[3:] == [
        "s.yaml: gpupool:remoteGpu[3].budget: expected a profile or explicit figures, not both "
        "(drop minGbps, which the profile derives)",
        "s.yaml: gpupool:remoteGpu[4].budget: expected profile (with maxOverhead), or both "
        "minGbps and maxRttUs",
    ]


def test_a_profile_without_synchronous_calls_bounds_no_round_trip(tmp_path: Path) -> None:
    """The model's largest RTT is infinite: the tier is sized by bandwidth alone, the tag
    carries the ceiling a stack may name (a finite number), and every view says why."""
    (tmp_path / "stream.yaml").write_text(
        "name: stream\nlocal_time_s: 2\nsync_calls: 0\nasync_calls: 50000\n"
        "bytes_to_gpu: 1.0e+8\nbytes_from_gpu: 1.0e+7\n")
    config, _ = parse_flat_config(stack(tier(budget={"profile": "stream.yaml"}, **IN_GROUP)),
                                  "s.yaml", base_dir=tmp_path)
    [resolved] = resolve_tiers(config, base_dir=tmp_path).values()
    p = load_profile(tmp_path / "stream.yaml")
    assert rtt_max_us(p, resolved.flow_gbps, 0.05) == math.inf
    assert resolved.rtt_unbounded and resolved.max_rtt_us == RTT_CEILING_US
    # 8·110 MB / 2 s / 5 % = 8.8 Gbps: more than g4dn.xlarge's 5, so g4dn.2xlarge (bandwidth)
    assert resolved.min_gbps == pytest.approx(8.8)
    assert resolved.proxy.instance_type == "g4dn.2xlarge"
    tags = resolved.budget_tags()
    assert tags == {MIN_GBPS_TAG: "8.8", MAX_RTT_TAG: "1000000", CLIENTS_TAG: "in-group"}
    assert all(math.isfinite(float(tags[k])) for k in (MIN_GBPS_TAG, MAX_RTT_TAG))
    assert resolved.max_rtt_text.startswith("any round trip (no synchronous call; tagged 1000000")
    # the ceiling is what budget.maxRttUs itself accepts, so a person could write the same tier
    config, _ = parse_flat_config(stack(tier(budget={"minGbps": 8.8, "maxRttUs": 1e6},
                                             **IN_GROUP)), "s.yaml")
    assert resolve_tiers(config)["bert"].budget_tags() == tags
    too_far = stack(tier(budget={"minGbps": 8.8, "maxRttUs": 1.5e6}, **IN_GROUP))
    assert problems(too_far)[0].endswith("budget.maxRttUs: expected at most 1000000, got 1500000.0")


def test_a_profile_that_moves_no_byte_needs_no_bandwidth(tmp_path: Path) -> None:
    (tmp_path / "tiny.yaml").write_text(
        "name: tiny\nlocal_time_s: 1\nsync_calls: 100\nbytes_to_gpu: 0\nbytes_from_gpu: 0\n")
    config, _ = parse_flat_config(stack(tier(budget={"profile": "tiny.yaml"})), "s.yaml",
                                  base_dir=tmp_path)
    [resolved] = resolve_tiers(config, base_dir=tmp_path).values()
    assert resolved.proxy.instance_type == "g4dn.xlarge" and not resolved.rtt_unbounded
    # 100 round trips within 5 % of 1 s: 500 µs each
    assert resolved.budget_tags() == {MIN_GBPS_TAG: "0", MAX_RTT_TAG: "500",
                                      CLIENTS_TAG: "outside"}
