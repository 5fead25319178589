# ruff: noqa: RUF002, RUF003  (× is the multiplication sign users read)
"""Every account and every region: ``gpupool debt --accounts all|LIST --regions all|LIST``.

Accounts come from AWS Organizations (``ListAccounts``, 20 a page) or the list given; the
caller's own account (``sts GetCallerIdentity``) is read with the caller's credentials, every
other through ``sts AssumeRole`` into ``arn:<partition>:iam::<id>:role/<--role-name>``. Regions
are the list given, or with ``all`` each account's enabled regions (``ec2 DescribeRegions`` in
that account: opt-in regions it has not enabled are not listed, so they are not read).

Each account-region is a *scope*, read as one region always is (discovery, then
``⌈series / 500⌉`` GetMetricData calls), on a thread pool of ``--concurrency`` workers that share
one boto3 session (its service models loaded once) and use their own clients. A scope that fails
(AssumeRole refused, a region the account has not enabled, throttling after every retry, the
deadline) is a ``scope-unread`` finding naming the account, the region and AWS's answer; an
account Organizations lists as suspended or closing is an ``account-skipped`` finding. Neither
is ever a crash or a silent gap; the command exits 1 when any scope was not read.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from gpupool.catalog import Catalog
from gpupool.debt.aws import ApiCalls, aws_errors, known_regions, make_clients, paginate
from gpupool.debt.discover import discover_pools
from gpupool.debt.figures import pool_figures
from gpupool.debt.metrics import SERIES, expected_calls, read_series
from gpupool.debt.model import PoolFigures
from gpupool.debt.window import Window
from gpupool.errors import InputError

DEFAULT_ROLE = "OrganizationAccountAccessRole"
DEFAULT_CONCURRENCY = 8
MAX_CONCURRENCY = 64
SESSION_NAME = "gpupool-debt"
# Codes AWS answers in a region the account has not enabled (opt-in regions), or for
# credentials a region does not accept: said as such in the finding.
REGION_CODES = ("AuthFailure", "UnrecognizedClientException", "InvalidClientTokenId",
                "OptInRequired")
_ROLE = re.compile(r"^[\w+=,.@/-]{1,64}$")


@dataclass(frozen=True)
class Account:
    id: str
    name: str = ""
    credentials: dict[str, str] | None = None  # None: the caller's own


@dataclass
class ScopeResult:
    """One account-region: its pools' figures, or why it was not read."""

    account: Account
    region: str
    figures: list[PoolFigures] = field(default_factory=list)
    findings: list[dict[str, str]] = field(default_factory=list)
    groups_seen: int = 0
    series: int = 0
    metric_calls: int = 0
    budget: int | None = None  # ⌈series / 500⌉ × pages: what GetMetricData should take
    reservations: list[dict[str, Any]] = field(default_factory=list)
    calls: ApiCalls = field(default_factory=ApiCalls)
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"account": self.account.id, "account_name": self.account.name,
                "region": self.region, "status": "unread" if self.error else "read",
                "pools": len(self.figures), "groups_seen": self.groups_seen,
                "series": self.series, "get_metric_data": self.metric_calls,
                "expected_get_metric_data": self.budget,
                "api_calls": self.calls.total, "error": self.error}


@dataclass
class FleetReading:
    figures: list[PoolFigures]
    findings: list[dict[str, str]]
    scopes: list[dict[str, Any]]
    api_calls: int
    api_detail: dict[str, Any]
    metric_calls: int
    groups_seen: int
    reservations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def unread(self) -> int:
        return sum(s["status"] != "read" for s in self.scopes)


def parse_list(value: str, flag: str) -> list[str] | None:
    """``all`` → None; otherwise the comma-separated items, each checked."""
    if value.strip().casefold() == "all":
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise InputError(f"{flag} {value}: expected all or a comma-separated list")
    if flag == "--accounts":
        for a in items:
            if not re.fullmatch(r"\d{12}", a):
                raise InputError(f"--accounts {value}: expected all or 12-digit account ids "
                                 f"separated by commas, {a!r} is not one")
    else:
        known = known_regions()
        for r in items:
            if r not in known:
                raise InputError(f"--regions {value}: expected all or AWS regions such as "
                                 f"us-east-1,eu-west-1, {r!r} is not one botocore knows")
    return list(dict.fromkeys(items))


def parse_role(value: str) -> str:
    if not _ROLE.match(value):
        raise InputError(f"--role-name {value}: expected an IAM role name (letters, digits "
                         "and +=,.@_-, at most 64)")
    return value


def parse_concurrency(value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= MAX_CONCURRENCY:
        raise InputError(f"--concurrency {value}: expected a whole number from 1 to "
                         f"{MAX_CONCURRENCY}")
    return int(value)


class Fleet:
    """The reads of many scopes: one boto3 session, a bounded pool of threads."""

    def __init__(self, session: Any = None, *, role_name: str = DEFAULT_ROLE,
                 concurrency: int = DEFAULT_CONCURRENCY, deadline: Any = None,
                 home_region: str | None = None, reservations: bool = False) -> None:
        import boto3

        self.session = session or boto3.session.Session()
        self.role_name = role_name
        self.concurrency = concurrency
        self.deadline = deadline
        self.home = home_region or self.session.region_name or "us-east-1"
        self.reservations = reservations  # read each scope's capacity reservations too
        self.control = ApiCalls()  # Organizations, STS and DescribeRegions
        self._lock = threading.Lock()

    def _client(self, service: str, credentials: dict[str, str] | None = None) -> Any:
        from botocore.config import Config

        from gpupool.debt.aws import _CREATE, MAX_ATTEMPTS

        cfg = Config(retries={"total_max_attempts": MAX_ATTEMPTS, "mode": "standard"},
                     connect_timeout=5, read_timeout=60)
        with _CREATE:
            c = self.session.client(service, region_name=self.home, config=cfg,
                                    **(credentials or {}))
        c.meta.events.register("before-call", self.control.on_call)
        c.meta.events.register("before-send", self.control.on_send)
        if self.deadline is not None:
            c.meta.events.register("before-send", self.deadline.on_send)
        return c

    # -- accounts -------------------------------------------------------------------------

    def caller(self) -> tuple[str, str]:
        """The caller's account id and partition."""
        sts = self._client("sts")
        with aws_errors("sts GetCallerIdentity", str(sts.meta.endpoint_url)):
            me = sts.get_caller_identity()
        return str(me["Account"]), str(me.get("Arn", "arn:aws:")).split(":")[1] or "aws"

    def accounts(self, wanted: list[str] | None) -> tuple[list[Account], list[dict[str, str]]]:
        """The accounts to read (Organizations' active ones when ``wanted`` is None)."""
        if wanted is not None:
            return [Account(a) for a in wanted], []
        org = self._client("organizations")
        with aws_errors("organizations ListAccounts (--accounts all)",
                        str(org.meta.endpoint_url)):
            listed = list(paginate(org, "list_accounts", "Accounts"))
        out, skipped = [], []
        for a in sorted(listed, key=lambda a: str(a["Id"])):
            state = str(a.get("State") or a.get("Status") or "ACTIVE")
            if state == "ACTIVE":
                out.append(Account(str(a["Id"]), str(a.get("Name") or "")))
            else:
                skipped.append({"pool": "", "finding": "account-skipped",
                                "account": str(a["Id"]), "region": "", "message": (
                                    f"account {a['Id']} ({a.get('Name') or 'unnamed'}): "
                                    f"Organizations lists it as {state}; not read")})
        return out, skipped

    def assume(self, account: Account, me: str, partition: str) -> Account:
        if account.id == me:
            return account
        sts = self._client("sts")
        arn = f"arn:{partition}:iam::{account.id}:role/{self.role_name}"
        with aws_errors(f"sts AssumeRole {arn}", str(sts.meta.endpoint_url)):
            c = sts.assume_role(RoleArn=arn, RoleSessionName=SESSION_NAME)["Credentials"]
        return Account(account.id, account.name, {
            "aws_access_key_id": c["AccessKeyId"], "aws_secret_access_key": c["SecretAccessKey"],
            "aws_session_token": c["SessionToken"]})

    def regions_of(self, account: Account) -> list[str]:
        ec2 = self._client("ec2", account.credentials)
        with aws_errors("ec2 DescribeRegions (--regions all)", str(ec2.meta.endpoint_url)):
            found = ec2.describe_regions()["Regions"]
        known = known_regions()
        return sorted(str(r["RegionName"]) for r in found if r["RegionName"] in known)

    # -- scopes ---------------------------------------------------------------------------

    def read_scope(self, account: Account, region: str, window: Window,
                   catalog: Catalog) -> ScopeResult:
        out = ScopeResult(account, region)
        try:
            clients = make_clients(region, self.session, self.deadline, account.credentials)
            clients.account = account.id
            out.calls = clients.calls
            discovery = discover_pools(clients, catalog)
            out.groups_seen = discovery.groups_seen
            out.series = len(discovery.pools) * len(SERIES)
            readings = read_series(clients, discovery.pools, window)
            if self.reservations:
                from gpupool.debt.reservations import read_reservations, reservation_rows

                out.reservations = reservation_rows(read_reservations(clients),
                                                    discovery.pools, window, catalog)
        except InputError as e:
            out.error = hint(str(e))
            return out
        out.metric_calls = readings.calls
        out.budget = expected_calls(out.series, window)
        out.figures = [pool_figures(p, readings, window) for p in discovery.pools]
        where = {"account": account.id, "region": region}
        out.findings = [{**f, **where} for f in discovery.findings]
        for f in out.figures:
            f.findings[:] = [{**x, **where} for x in f.findings]
        out.findings += [{"pool": "", "finding": "read-problem", **where,
                          "message": f"account {account.id} {region}: {m}"}
                         for m in readings.problems]
        return out

    def read(self, window: Window, catalog: Catalog, accounts: list[str] | None,
             regions: list[str] | None,
             on_scope: Callable[[ScopeResult], None] | None = None) -> FleetReading:
        """Every scope of ``accounts`` × ``regions`` (None: all; no accounts: the caller's),
        concurrently."""
        me, partition = self.caller()
        if accounts is not None and not accounts:
            accounts = [me]
        listed, findings = self.accounts(accounts)
        failed: list[ScopeResult] = []

        def prepare(a: Account) -> tuple[Account, list[str]] | None:
            try:
                got = self.assume(a, me, partition)
                return got, (regions if regions is not None else self.regions_of(got))
            except InputError as e:
                failed.append(ScopeResult(a, "*" if regions is None else ",".join(regions),
                                          error=hint(str(e))))
                return None

        catalogs: dict[str, Catalog] = {}

        def priced(region: str) -> Catalog:
            with self._lock:
                if region not in catalogs:
                    catalogs[region] = catalog.for_region(region)
                return catalogs[region]

        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="debt") as pool:
            ready = [r for r in pool.map(prepare, listed) if r is not None]
            scopes = [(a, region) for a, rs in ready for region in rs]
            results = list(pool.map(lambda s: self.read_scope(s[0], s[1], window,
                                                               priced(s[1])), scopes))
        results += failed
        results.sort(key=lambda s: (s.account.id, s.region))
        if on_scope is not None:
            for s in results:
                on_scope(s)
        return self.merge(results, findings)

    def merge(self, results: Sequence[ScopeResult], findings: list[dict[str, str]]
              ) -> FleetReading:
        figures: list[PoolFigures] = []
        by_op = dict(self.control.calls)
        retries = max(self.control.retries, 0)
        scopes = []
        reservations: list[dict[str, Any]] = []
        for s in results:
            figures += s.figures
            reservations += s.reservations
            findings = findings + s.findings
            for op, n in s.calls.calls.items():
                by_op[op] = by_op.get(op, 0) + n
            retries += max(s.calls.retries, 0)
            scopes.append(s.to_dict())
            if s.error:
                findings.append({"pool": "", "finding": "scope-unread", "account": s.account.id,
                                 "region": s.region, "message": (
                                     f"account {s.account.id}"
                                     + (f" ({s.account.name})" if s.account.name else "")
                                     + f" region {s.region}: not read: {s.error}; its pools "
                                     "are not in this report")})
        return FleetReading(
            figures=figures, findings=findings, scopes=scopes,
            api_calls=sum(by_op.values()),
            api_detail={"by_operation": dict(sorted(by_op.items())), "retries": retries},
            metric_calls=sum(s.metric_calls for s in results),
            groups_seen=sum(s.groups_seen for s in results), reservations=reservations)


def hint(message: str) -> str:
    """AWS's answer, with what it usually means for a region or a role."""
    if any(code in message for code in REGION_CODES):
        return message + " (is the region enabled in this account? opt-in regions must be)"
    if "AssumeRole" in message and "AccessDenied" in message:
        return message + " (does the role exist in that account and trust the caller?)"
    return message


def build_fleet_report(fleet: Fleet, window: Window, catalog: Catalog,
                       accounts: list[str] | None, regions: list[str] | None,
                       kube: Any = None) -> Any:
    """The report of every scope (and the Prometheus pools, when ``kube`` reads them)."""
    from gpupool.debt.discover import Discovery
    from gpupool.debt.metrics import Readings
    from gpupool.debt.optimizer import OptimizerView
    from gpupool.debt.report import assemble

    got = fleet.read(window, catalog, accounts, regions)
    k = kube() if kube is not None else None
    read = sorted({s["region"] for s in got.scopes if s["status"] == "read"})
    return assemble(
        Discovery(groups_seen=got.groups_seen, findings=got.findings),
        Readings(calls=got.metric_calls), window, ",".join(read),
        OptimizerView(reason="not read with --accounts/--regions (a one-region run reads it)"),
        api_calls=got.api_calls, api_detail=got.api_detail,
        price_region="each pool's own region", aws_figures=got.figures, scopes=got.scopes,
        kube=k.pools if k else (), prometheus=k.sources if k else (),
        kube_findings=k.findings if k else (),
        reservations=got.reservations if fleet.reservations else None)
