"""A stack file's top-level keys are Pulumi's stack settings and nothing else (issue 16, item 3):
``config``; ``secretsprovider``, ``encryptedkey``, ``encryptionsalt`` in the shapes Pulumi writes;
never a key nothing reads, and never ``environment`` (config the kit cannot see)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "cli"))
from cli_support import run_in_process  # noqa: E402

DEV = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
# What `pulumi stack init --secrets-provider awskms://…` and a passphrase stack write
# (the values as Pulumi's docs show them: the AWS KMS walkthrough, a passphrase stack file).
KMS = ("secretsprovider: awskms://alias/pulumi-encryption?region=us-west-2\n"
       "encryptedkey: AQICAHiGajWxHHTBJxo1FU9BOztzLzxEXpr02SgLetPNGfdfLAG7c5ylmHRJJRz5jtaj2Ltz"
       "AAAAfjB8BgkqhkiG9w0BBwagbzBtAgEAMGgGCSqGSIb3DQEHATAeBglghkgBZQMEAS4wEQQMT+iyFkgT4bmdja9W"
       "AgEQgDuVYN+iLr6sdyFNGXJS8GfjKiqMBXVvwmn9byd3ywCfJwMsuDnpqAWSmquV5eoLBdPEEOY1D/TuBQuCLQ==\n")
SALT = "encryptionsalt: v1:GEHe83S30O0=:v1:s8vb7cVFSz64pUmv:Ff5AbbcbTSim8cBwDCQCwraGHEQQ/A==\n"


def validate(tmp_path: Path, text: str) -> tuple[int, list[str]]:
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text(text)
    r = run_in_process(["validate", str(path)])
    return r.code, r.err_lines


@pytest.mark.parametrize("settings", [KMS, SALT], ids=["kms", "passphrase"])
def test_pulumis_own_settings_are_accepted(tmp_path: Path, settings: str) -> None:
    code, err = validate(tmp_path, settings + DEV)
    assert code == 0, err


@pytest.mark.parametrize(("top", "expected"), [
    ("backend: s3://x\n", "backend: expected one of Pulumi's stack settings (config, "
     "secretsprovider, encryptedkey, encryptionsalt), not this key"),
    ("secretprovider: passphrase\n", "secretprovider: expected one of Pulumi's stack settings "
     "(config, secretsprovider, encryptedkey, encryptionsalt) (did you mean secretsprovider?), "
     "not this key"),
    ("'config ': {}\n", "'config ': expected one of Pulumi's stack settings"),
    ("environment: [team-secrets]\n", "environment: expected no Pulumi ESC environment: config "
     "it adds is invisible to gpupool validate, plan and check"),
    ("secretsprovider: file:///tmp/key\n", "secretsprovider: expected default, passphrase or a "
     "KMS URL (awskms://…, azurekeyvault://…, gcpkms://…, hashivault://…), got 'file:///tmp/key'"),
    ("secretsprovider: \"passphrase\\n\"\n", "secretsprovider: expected default, passphrase"),
    ("encryptedkey: [1]\n", "encryptedkey: expected the base64 data key Pulumi wrote, got [1]"),
    ("encryptionsalt: salty\n", "encryptionsalt: expected the salt Pulumi wrote"),
], ids=["unknown", "typo", "whitespace", "esc-environment", "provider-scheme", "provider-newline",
        "key-shape", "salt-shape"])
def test_other_top_level_keys_are_refused(tmp_path: Path, top: str, expected: str) -> None:
    code, err = validate(tmp_path, top + DEV)
    assert code == 2
    assert [line for line in err if line.startswith("gpupool validate: ")] == err
    assert any(f"Pulumi.s.yaml: {expected}" in line for line in err), err
