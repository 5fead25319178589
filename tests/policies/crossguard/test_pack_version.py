"""The pack reports the version ``PulumiPolicy.yaml`` declares, which is the package's
(issue 7, item 16): pulumi-policy's Python SDK would say 0.0.1 in every diagnostic."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpupool import __version__
from policies.testing import PolicyPackHarness

MANIFEST = Path(__file__).resolve().parents[3] / "policies" / "PulumiPolicy.yaml"


def test_the_manifest_names_the_package_version() -> None:
    assert yaml.safe_load(MANIFEST.read_text())["version"] == __version__


def test_the_pack_reports_the_manifest_version(pack: PolicyPackHarness) -> None:
    version = yaml.safe_load(MANIFEST.read_text())["version"]
    assert pack.get_analyzer_info().version == version
    pack.configure({})
    [d, *_] = pack.analyze("aws:ec2/instance:Instance", "gpu",
                           {"instanceType": "g4dn.2xlarge"}).diagnostics
    assert d.policy_pack_version == version
