"""Policy configuration and waivers, validated, with errors that name the file and the key.

The config YAML has **the same shape as Pulumi's ``--policy-pack-config`` JSON**, so one file
serves ``gpupool check --config`` and the CrossGuard pack::

    all: advisory                          # every policy's enforcement (optional)
    gpu-smallest-instance: disabled        # a policy's enforcement
    gpu-pool-scales-on-utilisation:        # enforcement and camelCase parameters
      enforcementLevel: mandatory
      minTarget: 50
    gpu-no-vertical-upsize:
      baseline: prod-export.json           # read by the CrossGuard pack; check ignores it

Precedence: a policy's own level, then ``all``, then the rule's default. The waivers YAML::

    expiryWarningDays: 14                  # optional: warn this many days before an expiry
    waivers:
      - id: W-12
        policy: gpu-smallest-instance
        resource: "module.training.aws_instance.*"   # glob (* and ?) on the address
        owner: ml-platform
        reason: EFA benchmark until the p5 quota lands
        expires: 2026-03-31                # the LAST day it applies (inclusive)
      - id: W-13
        policy: gpu-chargeback-tags
        resource: "*"                      # every resource: only with allowWildcard
        allowWildcard: true
        owner: finops
        reason: tags arrive with the new account baseline
        expires: 2026-02-28

Waivers are judged as of today (``gpupool check --today DATE`` for another day):

- ``expires`` is a date (``YYYY-MM-DD``; a number or a time of day is bad input) and is the last
  day the waiver applies: it waives on that day and is expired from the next one.
- ``owner`` and ``reason`` are strings. A waiver that is expired, or lacks an owner, a reason or
  an expiry (or has blank ones), waives nothing and is itself a mandatory violation (see
  :mod:`policies.waivers`); a file of the wrong shape is bad input.
- ``resource: "*"`` (a pattern of stars only, which matches every resource) is bad input unless
  the waiver says ``allowWildcard: true``; such a waiver is reported as a warning every run.
- A waiver that matches no finding, or expires within ``expiryWarningDays`` (default 14), is a
  warning (advisory), so stale and soon-to-lapse exceptions are seen before they matter.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpupool.errors import InputError
from gpupool.record import Frozen, replace
from policies.rules import rule_ids
from policies.rules.params import Enforcement, RuleParams, aliases
from policies.rules.registry import INFOS, default_params, load

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

ALL_KEY: Final = "all"
LEVEL_KEY: Final = "enforcementLevel"
BASELINE_KEY: Final = "baseline"  # the CrossGuard pack's old-inputs file; check has its own
REQUIRE_BASELINE_KEY: Final = "requireBaseline"  # the pack's fail-closed switch for baselines
WAIVER_POLICY: Final = "gpupool-waiver"
EXPIRY_WARNING_KEY: Final = "expiryWarningDays"
_LEVELS: Final = ", ".join(e.value for e in Enforcement)
DEFAULT_EXPIRY_WARNING_DAYS: Final = 14

if TYPE_CHECKING:  # pydantic: imported only to read a config or a waivers file
    from pydantic import ValidationError

    from policies.waiver_file import Waiver


class PolicySettings(Frozen):
    """A policy's enforcement and parameters. ``configured`` None: the rule's defaults, made on
    first use of :attr:`params` (so a check imports only the rules it runs)."""

    __slots__ = ("enforcement", "configured", "baseline", "rule_id")

    enforcement: Enforcement
    configured: RuleParams | None
    baseline: str | None  # kept for the CrossGuard pack; gpupool check ignores it
    rule_id: str  # whose defaults ``params`` are when nothing is configured

    def __init__(
        self,
        enforcement: Enforcement,
        configured: RuleParams | None = None,
        baseline: str | None = None,
        rule_id: str = "",
    ) -> None:
        object.__setattr__(self, "enforcement", enforcement)
        object.__setattr__(self, "configured", configured)
        object.__setattr__(self, "baseline", baseline)
        object.__setattr__(self, "rule_id", rule_id)
        self.__post_init__()

    def __post_init__(self) -> None:
        if self.configured is None and not self.rule_id:
            raise TypeError("PolicySettings needs its parameters or the rule_id of its defaults")

    @property
    def params(self) -> RuleParams:
        if self.configured is not None:
            return self.configured
        return default_params(self.rule_id)

    def with_params(self, params: RuleParams) -> PolicySettings:
        return replace(self, configured=params)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PolicySettings):
            return NotImplemented
        return ((self.enforcement, self.baseline, self.params)
                == (other.enforcement, other.baseline, other.params))

    def __hash__(self) -> int:
        return hash((self.enforcement, self.baseline))


class Settings(Frozen):
    __slots__ = (
        "policies", "waivers", "config_path", "waivers_path", "notes", "expiry_warning_days"
    )
    policies: Mapping[str, PolicySettings]
    waivers: tuple[Waiver, ...]
    config_path: str | None
    waivers_path: str | None
    notes: tuple[str, ...]  # things worth telling the user, not errors
    # warn about a waiver this many days before its last day
    expiry_warning_days: int

    def __init__(
        self,
        policies: Mapping[str, PolicySettings],
        waivers: tuple[Waiver, ...] = (),
        config_path: str | None = None,
        waivers_path: str | None = None,
        notes: tuple[str, ...] = (),
        expiry_warning_days: int = DEFAULT_EXPIRY_WARNING_DAYS,
    ) -> None:
        object.__setattr__(self, "policies", policies)
        object.__setattr__(self, "waivers", waivers)
        object.__setattr__(self, "config_path", config_path)
        object.__setattr__(self, "waivers_path", waivers_path)
        object.__setattr__(self, "notes", notes)
        object.__setattr__(self, "expiry_warning_days", expiry_warning_days)

    @classmethod
    def default(cls) -> Settings:
        return cls({i.id: PolicySettings(i.default_enforcement, rule_id=i.id) for i in INFOS})

    def enforcement(self, rule_id: str) -> Enforcement:
        return self.policies[rule_id].enforcement

    def params(self, rule_id: str) -> RuleParams:
        return self.policies[rule_id].params

    def with_waivers(self, waivers: tuple[Waiver, ...], path: str | None = None,
                     expiry_warning_days: int = DEFAULT_EXPIRY_WARNING_DAYS) -> Settings:
        return replace(self, waivers=waivers, waivers_path=path,
                       expiry_warning_days=expiry_warning_days)


def load_settings(config_path: str | None, waivers_path: str | None) -> Settings:
    """Settings from the config and waivers files (either may be None: defaults, no waivers).

    Raises :class:`InputError` with one line per problem, each naming the file and the key.
    """
    if config_path is None and waivers_path is None:
        return Settings.default()  # nothing to read: neither yaml nor pydantic is imported
    from gpupool.yamlio import read_yaml

    settings = Settings.default() if config_path is None else parse_config(
        read_yaml(config_path), config_path)
    if waivers_path is None:
        return settings
    waivers, days = parse_waiver_file(read_yaml(waivers_path), waivers_path)
    return settings.with_waivers(waivers, waivers_path, days)


def _level(value: Any, path: str, key: str, problems: list[str]) -> Enforcement | None:
    if isinstance(value, str) and value in Enforcement.__members__.values():
        return Enforcement(value)
    hint = " (YAML reads on/off/yes/no as booleans: write disabled)" if isinstance(
        value, bool) else ""
    problems.append(f"{path}: {key}: expected one of {_LEVELS}, got {value!r}{hint}")
    return None


def parse_config(doc: Any, path: str) -> Settings:
    """Validate a policy config document (Pulumi ``--policy-pack-config`` shape)."""
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise InputError(f"{path}: expected a mapping of policy IDs (or 'all') to an enforcement "
                         f"level or settings, got {type(doc).__name__}")
    problems: list[str] = []
    default_level: Enforcement | None = None
    if ALL_KEY in doc:
        value = doc[ALL_KEY]
        if isinstance(value, Mapping):
            extra = [k for k in value if k != LEVEL_KEY]
            for k in extra:
                problems.append(f"{path}: {ALL_KEY}.{k}: unknown key ('all' takes only "
                                f"{LEVEL_KEY}; parameters belong to a policy)")
            if LEVEL_KEY in value:
                default_level = _level(value[LEVEL_KEY], path, f"{ALL_KEY}.{LEVEL_KEY}", problems)
        else:
            default_level = _level(value, path, ALL_KEY, problems)
    policies: dict[str, PolicySettings] = {}
    notes: list[str] = []
    known = rule_ids()
    for key in doc:
        if key != ALL_KEY and key not in known:
            from gpupool.suggest import did_you_mean  # (a mistyped ID only)

            problems.append(f"{path}: {key}: unknown policy ID{did_you_mean(str(key), known)} "
                            f"(known: {', '.join(known)})")
    for info in INFOS:  # a rule module is imported only when its parameters are configured
        rid = info.id
        level = default_level or info.default_enforcement
        raw: dict[str, Any] = {}
        baseline: str | None = None
        value = doc.get(rid)
        if isinstance(value, Mapping):
            raw = {str(k): v for k, v in value.items()}
            if LEVEL_KEY in raw:
                level = _level(raw.pop(LEVEL_KEY), path, f"{rid}.{LEVEL_KEY}", problems) or level
            if info.needs_old_inputs and BASELINE_KEY in raw:
                given = raw.pop(BASELINE_KEY)
                if isinstance(given, str) and given.strip():
                    baseline = given
                    notes.append(f"{path}: {rid}.{BASELINE_KEY} is read by the CrossGuard pack; "
                                 "gpupool check takes old inputs from the plan itself")
                elif given not in (None, ""):
                    problems.append(f"{path}: {rid}.{BASELINE_KEY}: expected a file path, "
                                    f"got {given!r}")
            if info.needs_old_inputs and REQUIRE_BASELINE_KEY in raw:
                required = raw.pop(REQUIRE_BASELINE_KEY)
                if not isinstance(required, bool):
                    problems.append(f"{path}: {rid}.{REQUIRE_BASELINE_KEY}: expected true or "
                                    f"false, got {required!r}")
        elif value is not None:
            level = _level(value, path, rid, problems) or level
        elif rid in doc:
            problems.append(f"{path}: {rid}: expected one of {_LEVELS} or a mapping, got null")
        if not raw:
            policies[rid] = PolicySettings(level, None, baseline, rid)
            continue
        from pydantic import ValidationError

        rule = load(rid)
        try:
            params = rule.parse_params(raw)
        except ValidationError as e:
            problems.extend(_param_problems(e, path, rid, rule.meta.params))
            continue
        policies[rid] = PolicySettings(level, params, baseline, rid)
    if problems:
        raise InputError(problems)
    return Settings(policies, config_path=path, notes=tuple(notes))


def _param_problems(err: ValidationError, path: str, rid: str,
                    model: type[RuleParams]) -> list[str]:
    known = ", ".join([LEVEL_KEY, *aliases(model)])
    out = []
    for e in err.errors(include_url=False):
        key = ".".join(str(p) for p in e["loc"])
        where = f"{rid}.{key}" if key else rid
        if e["type"] == "extra_forbidden":
            out.append(f"{path}: {where}: unknown parameter (known: {known})")
        else:
            msg = str(e["msg"]).removeprefix("Value error, ")
            out.append(f"{path}: {where}: {msg}, got {e.get('input')!r}")
    return out


def parse_waivers(doc: Any, path: str) -> tuple[Waiver, ...]:
    """Validate a waivers document; structural problems are bad input, not violations."""
    return parse_waiver_file(doc, path)[0]


def parse_waiver_file(doc: Any, path: str) -> tuple[tuple[Waiver, ...], int]:
    """The waivers of a document and its ``expiryWarningDays``; InputError on bad input.
    (:mod:`policies.waiver_file`: pydantic, imported only when there are waivers to read.)"""
    from policies.waiver_file import parse_waiver_file as parse

    return parse(doc, path)


def __getattr__(name: str) -> Any:  # ``from policies.settings import Waiver`` still works
    if name == "Waiver":
        from policies.waiver_file import Waiver

        return Waiver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
