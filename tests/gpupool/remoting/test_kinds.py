"""Network kinds of a proxy type: support from DescribeInstanceTypes data, per-flow figures."""

from __future__ import annotations

from gpupool.catalog import load_catalog
from gpupool.catalog.network import (
    DEFAULT_RTT_FLOOR_US,
    NetworkKind,
    flow_gbps,
    load_network_data,
)
from gpupool.remoting.kinds import kind_options, option


def test_every_catalog_type_gets_the_three_kinds_from_the_shared_data() -> None:
    data = load_network_data()
    for t in load_catalog():
        opts = kind_options(t, data)
        assert [o.kind for o in opts] == [NetworkKind.TCP, NetworkKind.ENA_EXPRESS,
                                          NetworkKind.EFA]
        by = {o.kind: o for o in opts}
        assert by[NetworkKind.TCP].supported is True
        assert by[NetworkKind.ENA_EXPRESS].supported is bool(data.ena_express(t.instance_type))
        assert by[NetworkKind.EFA].supported is t.efa_supported
        for o in opts:  # the same figures the proxy tier sizes with
            assert o.flow_gbps == flow_gbps(t.network_baseline_gbps, o.kind)
            assert o.flow_gbps <= t.network_baseline_gbps
            assert o.rtt_floor_us == DEFAULT_RTT_FLOOR_US[o.kind]


def test_a_type_the_ena_express_data_does_not_record_is_not_a_yes() -> None:
    p3 = load_catalog().get("p3.2xlarge")  # DescribeInstanceTypes (moto) did not describe it
    assert p3 is not None
    srd = option(p3, NetworkKind.ENA_EXPRESS)
    assert srd.supported is False and "not recorded" in srd.why
