"""An AWS Organization on a moto server: member accounts, each with GPU pools in its regions.

moto 5 keys its state by account: a request signed with credentials that moto's STS handed out
for ``AssumeRole`` of ``arn:aws:iam::<id>:role/...`` reads and writes account ``<id>``'s
backends (``get_account_id_from`` maps the access key to the role's account); the plain test
key is the default account 123456789012, the organization's management account. Organizations'
``CreateAccount`` makes member accounts with fresh ids. So the fleet is built exactly as the
report reads it: assume a role into each account, then write its groups and metrics there.
Shared by the tests and ``bench/debt_bench.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from debt_fleet import PoolSpec, build_fleet

from gpupool.debt.window import Window

ROLE = "OrganizationAccountAccessRole"


def create_accounts(session: Any, names: Sequence[str]) -> list[str]:
    """An organization (the caller's account manages it) and one member account per name."""
    org = session.client("organizations", region_name="us-east-1")
    org.create_organization(FeatureSet="ALL")
    ids = []
    for name in names:
        status = org.create_account(AccountName=name, Email=f"{name}@example.com")
        ids.append(str(status["CreateAccountStatus"]["AccountId"]))
    return ids


def session_in(session: Any, account: str, role: str = ROLE) -> Any:
    """A boto3 session acting in ``account`` through AssumeRole (moto's per-account state)."""
    import boto3

    sts = session.client("sts", region_name="us-east-1")
    c = sts.assume_role(RoleArn=f"arn:aws:iam::{account}:role/{role}",
                        RoleSessionName="fleet-builder")["Credentials"]
    return boto3.session.Session(aws_access_key_id=c["AccessKeyId"],
                                 aws_secret_access_key=c["SecretAccessKey"],
                                 aws_session_token=c["SessionToken"])


def build_org(session: Any, accounts: Sequence[str], regions: Sequence[str], window: Window,
              specs: Callable[[str, str], list[PoolSpec]]) -> int:
    """``specs(account, region)`` pools in every account and region; returns datums written."""
    written = 0
    for account in accounts:
        inside = session_in(session, account)
        for region in regions:
            pools = specs(account, region)
            if pools:
                written += build_fleet(inside, pools, window, region)
    return written
