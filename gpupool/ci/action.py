"""The steps of the gpupool GitHub Action, runnable (and tested) anywhere git runs.

``action.yml`` installs the kit from the action's own ref (a pinned release, or the base
branch's checkout for this repository's workflow) and runs ``python -I -m gpupool.ci.action``
with its inputs in ``GPUPOOL_*`` variables (never spliced into a script). This module then:

1. takes the policy config, waivers and teams file **from the base branch** (``git show``), so a
   pull request cannot weaken the rules that judge it; a file the PR changes is used as the base
   has it, and the change is reported for its owners' review (CODEOWNERS), with the verdict the
   PR's own version would give;
2. picks the stacks to check: those whose files changed against the base (every stack when the
   program, the kit or the teams file changed), or all, or the ones named;
3. runs ``gpupool check --stack S --base REF`` per stack, and once over the plan files given
   (Terraform plan JSON, Pulumi preview JSON), writing SARIF and Markdown from one evaluation
   (``--format sarif=FILE --format markdown=FILE``); with a teams file, runs
   ``team-gpu-quota`` once more over every stack's plan joined, since a quota spans stacks;
4. merges the SARIF runs into one upload (one code-scanning category per stack), and writes ONE
   comment within GitHub's 65,536-character limit (every stack gets its fair share);
5. sets the step outputs and decides the exit code from ``fail-level``.

Every command it runs is logged to ``commands.jsonl`` in the output directory.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpupool.ci import sarif
from gpupool.ci.comment import Part, assemble

FAIL_LEVELS = ("mandatory", "advisory", "never")
# Paths whose change alters what judges a pull request (besides the config, waivers and teams).
GOVERNED = (".github/**", "action.yml", "CODEOWNERS", "policies/**")
# Paths whose change alters every stack's plan or quota: then every stack is checked.
PROGRAM = ("infra/**", "gpupool/**", "Pulumi.yaml", "pyproject.toml")
REPORT_NOTE = ("the whole report is in the workflow run's `gpupool-reports` artifact, and "
               "every finding in code scanning")


@dataclass
class Inputs:
    plans: list[str]
    stacks: str
    base_ref: str
    policy_ref: str
    config: str
    waivers: str
    teams: str
    utilisation: str
    fail_level: str
    governed: list[str]
    out_dir: Path
    gpupool: list[str]


@dataclass
class Run:
    label: str
    code: int
    markdown: str
    sarif: Path | None
    stderr: str


@dataclass
class Trusted:
    """The policy files the checks use, and what the pull request does to them."""

    args: list[str] = field(default_factory=list)  # --config/--waivers/--teams from the base
    head_args: list[str] = field(default_factory=list)  # the same from the PR's working tree
    changed: list[str] = field(default_factory=list)  # policy files this PR changes
    notes: list[str] = field(default_factory=list)


def _env(name: str, default: str = "") -> str:
    """An input as action.yml passes it: set (even to empty: "not used") wins over the default."""
    return os.environ.get(f"GPUPOOL_{name}", default)


def _default_base() -> str:
    branch = os.environ.get("GITHUB_BASE_REF", "")
    return f"origin/{branch}" if branch else ""


def parse(argv: Sequence[str] | None = None) -> Inputs:
    p = argparse.ArgumentParser(prog="python -m gpupool.ci.action",
                                description="the gpupool GitHub Action's steps")
    p.add_argument("--plans", default=_env("PLANS"),
                   help="plan files, one per line or space-separated")
    p.add_argument("--stacks", default=_env("STACKS", "changed"),
                   help="changed (default), all, or stack names")
    p.add_argument("--base-ref", default=_env("BASE_REF") or _default_base(),
                   help="git ref of the base (default: origin/$GITHUB_BASE_REF in a PR)")
    p.add_argument("--policy-ref", default=_env("POLICY_REF"),
                   help="where config, waivers and teams come from (default: --base-ref)")
    p.add_argument("--config", default=_env("CONFIG", "policy-config.json"))
    p.add_argument("--waivers", default=_env("WAIVERS"))
    p.add_argument("--teams", default=_env("TEAMS", "stacks/teams.yaml"))
    p.add_argument("--utilisation", default=_env("UTILISATION"))
    p.add_argument("--fail-level", default=_env("FAIL_LEVEL", "mandatory"))
    p.add_argument("--governed", default=_env("GOVERNED"),
                   help="more path patterns whose change is reported for owners' review")
    p.add_argument("--out-dir", default=_env("OUT_DIR", "gpupool-reports"))
    p.add_argument("--gpupool", default=_env("COMMAND"),
                   help="the gpupool command (default: this interpreter, isolated)")
    a = p.parse_args(argv)
    a.fail_level = a.fail_level.strip() or "mandatory"
    if a.fail_level not in FAIL_LEVELS:
        p.error(f"--fail-level: expected one of {', '.join(FAIL_LEVELS)}, got {a.fail_level!r}")
    command = shlex.split(a.gpupool) if a.gpupool else [sys.executable, "-I", "-m", "gpupool"]
    return Inputs(
        plans=a.plans.split(), stacks=a.stacks.strip() or "changed", base_ref=a.base_ref.strip(),
        policy_ref=(a.policy_ref or a.base_ref).strip(), config=a.config.strip(),
        waivers=a.waivers.strip(), teams=a.teams.strip(), utilisation=a.utilisation.strip(),
        fail_level=a.fail_level, governed=a.governed.split(), out_dir=Path(a.out_dir),
        gpupool=command,
    )


class Git:
    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["git", "-C", str(self.cwd), *args], capture_output=True,
                              text=True, timeout=120)
        if check and done.returncode != 0:
            raise SystemExit(f"gpupool action: git {' '.join(args)}: {done.stderr.strip()}")
        return done

    def root(self) -> Path:
        return Path(self.run("rev-parse", "--show-toplevel").stdout.strip())

    def show(self, ref: str, path: str) -> str | None:
        done = self.run("show", f"{ref}:{path}", check=False)
        return done.stdout if done.returncode == 0 else None

    def changed(self, base: str) -> list[str]:
        """Files this branch changes since it left ``base`` (three-dot: the merge base)."""
        out = self.run("diff", "--name-only", f"{base}...HEAD").stdout
        return [line for line in out.splitlines() if line]


class Action:
    def __init__(self, inputs: Inputs, cwd: Path) -> None:
        self.i = inputs
        self.cwd = cwd
        self.git = Git(cwd)
        self.out = inputs.out_dir if inputs.out_dir.is_absolute() else cwd / inputs.out_dir
        self.log = self.out / "commands.jsonl"

    # -- running gpupool -------------------------------------------------------------------

    def gpupool(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [*self.i.gpupool, *args]
        with self.log.open("a", encoding="utf-8") as f:
            f.write(json.dumps(cmd) + "\n")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        return subprocess.run(cmd, cwd=self.cwd, capture_output=True, text=True, env=env,
                              timeout=1800)

    def check(self, label: str, target: list[str], extra: list[str]) -> Run:
        """One evaluation writing both reports (SARIF for code scanning, Markdown for the
        comment); its exit code is the verdict."""
        name = _file_label(label)
        sarif_path = self.out / "reports" / f"{name}.sarif"
        md_path = self.out / "reports" / f"{name}.md"
        done = self.gpupool("check", *target, *extra, "--format", f"sarif={sarif_path}",
                            "--format", f"markdown={md_path}")
        if done.returncode == 2 or not md_path.is_file():
            return Run(label, 2 if done.returncode in (0, 2) else done.returncode, "", None,
                       done.stderr.strip() or "gpupool check wrote no report")
        return Run(label, done.returncode, md_path.read_text(encoding="utf-8"),
                   sarif_path if sarif_path.is_file() else None, done.stderr.strip())

    # -- what judges the pull request ------------------------------------------------------

    def trusted(self, changed: list[str] | None) -> Trusted:
        t = Trusted()
        folder = self.out / "trusted"
        folder.mkdir(parents=True, exist_ok=True)
        for flag, path in (("--config", self.i.config), ("--waivers", self.i.waivers),
                           ("--teams", self.i.teams)):
            if not path:
                continue
            here = self.cwd / path
            head_exists = here.is_file()
            if head_exists:
                t.head_args += [flag, str(here)]
            if not self.i.policy_ref:  # no base (a push, a manual run): the checkout is trusted
                if head_exists:
                    t.args += [flag, str(here)]
                continue
            text = self.git.show(self.i.policy_ref, self._repo_path(path))
            if text is None:
                if head_exists:
                    t.changed.append(path)
                    t.notes.append(f"`{path}` is new in this pull request: it is not applied "
                                   "until it is merged")
                continue
            copy = folder / Path(path).name
            copy.write_text(text, encoding="utf-8")
            t.args += [flag, str(copy)]
            if changed is not None and self._repo_path(path) in changed:
                t.changed.append(path)
        if self.i.utilisation:  # data, not policy: taken as the workflow gives it
            t.args += ["--utilisation", self.i.utilisation]
            t.head_args += ["--utilisation", self.i.utilisation]
        return t

    def _repo_path(self, path: str) -> str:
        """``path`` (relative to the working directory) relative to the repository root."""
        full = (self.cwd / path).resolve()
        try:
            return str(full.relative_to(self.git.root().resolve()))
        except ValueError:
            return path

    def governed_changes(self, changed: list[str], trusted: Trusted) -> list[str]:
        patterns = [*GOVERNED, *self.i.governed]
        policy = {self._repo_path(p) for p in trusted.changed}
        return sorted({f for f in changed
                       if f in policy or any(fnmatch.fnmatch(f, p) for p in patterns)})

    # -- which stacks ------------------------------------------------------------------------

    def stack_dir(self) -> Path:
        from gpupool.config.stackfile import find_project, stack_config_dir

        project = find_project(self.cwd)
        if project is None:
            return self.cwd / "stacks"
        return project.parent / stack_config_dir(project)

    def stacks(self, changed: list[str] | None) -> list[str]:
        folder = self.stack_dir()
        every = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in folder.glob("Pulumi.*.yaml"))
        wanted = self.i.stacks
        if wanted == "all" or (wanted == "changed" and changed is None):
            return every
        if wanted != "changed":
            return wanted.replace(",", " ").split()
        assert changed is not None
        rel = self._repo_path(str(folder.relative_to(self.cwd))) if folder.is_relative_to(
            self.cwd) else str(folder)
        teams = self._repo_path(self.i.teams) if self.i.teams else None
        if any(any(fnmatch.fnmatch(f, p) for p in PROGRAM) for f in changed) or (
                teams in changed):
            return every
        out = []
        for f in changed:
            path = Path(f)
            if str(path.parent) == rel and path.name.startswith("Pulumi.") and \
                    path.suffix == ".yaml":
                name = path.name[len("Pulumi."):-len(".yaml")]
                if name in every:  # a stack the PR deletes has nothing left to check
                    out.append(name)
        return sorted(out)

    # -- the whole run -------------------------------------------------------------------------

    def run(self) -> int:
        (self.out / "reports").mkdir(parents=True, exist_ok=True)
        self.log.write_text("")
        if self.i.base_ref and self.git.run("rev-parse", "--verify", "--quiet",
                                            f"{self.i.base_ref}^{{commit}}",
                                            check=False).returncode != 0:
            sys.stderr.write(f"gpupool action: base ref {self.i.base_ref!r} is not in this "
                             "checkout: check out with fetch-depth: 0 (actions/checkout)\n")
            _write_outputs({"verdict": "error", "exit-code": "2"})
            return 2
        changed = self.git.changed(self.i.base_ref) if self.i.base_ref else None
        trusted = self.trusted(changed)
        stacks = self.stacks(changed)
        runs: list[Run] = []
        base = ["--base", self.i.base_ref] if self.i.base_ref else []
        for stack in stacks:
            runs.append(self.check(f"stack {stack}", ["--stack", stack, *base], trusted.args))
        if self.i.plans:
            runs.append(self.check("plans", list(self.i.plans), trusted.args))
        if stacks:
            quotas = self.quotas_across_stacks(trusted)
            if quotas is not None:
                runs.append(quotas)
        governed = self.governed_changes(changed or [], trusted)
        comparison = self.compare(stacks, base, trusted) if trusted.changed else []
        return self.finish(runs, stacks, governed, trusted, comparison)

    def quotas_across_stacks(self, trusted: Trusted) -> Run | None:
        """team-gpu-quota over every stack at once: a quota is per team and environment over all
        its stacks, and one ``check --stack`` sees one stack, so a team could otherwise spread
        its GPUs over several stack files. Every stack is planned at the head, the plans are
        joined into one, and only that policy runs on it, with the base branch's teams file."""
        if "--teams" not in trusted.args:
            return None
        teams = trusted.args[trusted.args.index("--teams") + 1]
        level = self._quota_setting(trusted)
        if level is None:
            return None  # the base branch's config disables the policy
        folder = self.out / "plans"
        folder.mkdir(parents=True, exist_ok=True)
        every = self.stacks(None)
        resources: list[object] = []
        for stack in every:
            target = folder / f"{_file_label(stack)}.json"
            done = self.gpupool("plan", stack, "--format", "json", "--output", str(target))
            if done.returncode != 0:
                return Run("team quotas", 2, "", None,
                           f"stack {stack}: {done.stderr.strip() or 'gpupool plan failed'}")
            resources += json.loads(target.read_text(encoding="utf-8")).get("resources", [])
        joined = folder / "all-stacks.json"
        joined.write_text(json.dumps({"kind": "gpupool-plan", "version": 1,
                                      "stack": "all stacks", "resources": resources}),
                          encoding="utf-8")
        config = self.out / "trusted" / "team-quotas-config.json"
        config.write_text(json.dumps({"all": "disabled", "team-gpu-quota": level}),
                          encoding="utf-8")
        return self.check("team quotas", [str(joined)],
                          ["--config", str(config), "--teams", teams])

    def _quota_setting(self, trusted: Trusted) -> object | None:
        """team-gpu-quota's entry of the base branch's config (mandatory when it has none)."""
        if "--config" not in trusted.args:
            return "mandatory"
        from gpupool.errors import InputError
        from gpupool.yamlio import read_yaml

        path = trusted.args[trusted.args.index("--config") + 1]
        try:
            doc = read_yaml(path)
        except InputError:
            return "mandatory"  # the per-stack checks report the broken config
        entry = doc.get("team-gpu-quota", "mandatory") if isinstance(doc, dict) else "mandatory"
        level = entry.get("enforcementLevel") if isinstance(entry, dict) else entry
        if level is None and isinstance(doc, dict) and isinstance(doc.get("all"), str):
            level = doc["all"]
        if level == "disabled":
            return None
        if isinstance(entry, dict):
            entry = {k: v for k, v in entry.items() if k not in ("teamsFile", "teams")}
            entry.setdefault("enforcementLevel", level or "mandatory")
            return entry
        return entry

    def compare(self, stacks: list[str], base: list[str], trusted: Trusted) -> list[str]:
        """The verdict each stack would get with the PR's own policy files: what the change
        would let through (or stop), for the reviewers."""
        lines = []
        for stack in stacks:
            done = self.gpupool("check", "--stack", stack, *base, *trusted.head_args,
                                "--format", "json", "--output",
                                str(self.out / "reports" / f"{_file_label(stack)}.head.json"))
            lines.append(f"- stack `{stack}`: {_verdict_word(done.returncode)} with this pull "
                         "request's own policy files")
        return lines

    def finish(self, runs: list[Run], stacks: list[str], governed: list[str],
               trusted: Trusted, comparison: list[str]) -> int:
        merged = sarif.merge([(_file_label(r.label), r.sarif) for r in runs
                              if r.sarif is not None])
        sarif_out = ""
        counts = {"error": 0, "warning": 0, "note": 0}
        if merged is not None:
            path = self.out / "gpupool.sarif"
            path.write_text(json.dumps(merged), encoding="utf-8")
            sarif_out = str(path)
            counts = sarif.counts(merged)
        code = exit_code(runs, counts, self.i.fail_level)
        verdict = ("error" if any(r.code == 2 for r in runs)
                   else "fail" if any(r.code == 1 for r in runs) else "pass")
        comment = self.comment(runs, stacks, governed, trusted, comparison, verdict)
        comment_path = self.out / "comment.md"
        comment_path.write_text(comment, encoding="utf-8")
        for f in governed:
            _annotate("warning", f, "changes what judges pull requests: review by its owners "
                      "(CODEOWNERS) before merging; this run used the base branch's rules")
        for r in runs:
            if r.code == 2:
                _annotate("error", None, f"gpupool check ({r.label}): {r.stderr}")
        outputs = {"verdict": verdict, "exit-code": str(code), "sarif": sarif_out,
                   "comment": str(comment_path), "stacks": " ".join(stacks),
                   "governed-changes": " ".join(governed),
                   "mandatory": str(counts["error"]), "advisory": str(counts["warning"])}
        _write_outputs(outputs)
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as f:
                f.write(comment)
        sys.stdout.write(f"gpupool action: {verdict}; {len(runs)} check(s), "
                         f"{counts['error']} mandatory, {counts['warning']} advisory; "
                         f"exit {code} (fail-level {self.i.fail_level})\n")
        return code

    def comment(self, runs: list[Run], stacks: list[str], governed: list[str],
                trusted: Trusted, comparison: list[str], verdict: str) -> str:
        icon = {"pass": "✅", "fail": "❌", "error": "⛔"}[verdict]
        head = [f"## {icon} gpupool: {verdict}", ""]
        if not runs:
            head.append("No stack changed and no plan was given: nothing to check.")
        if governed:
            head += ["### ⚠️ This pull request changes what judges it", "",
                     "These files decide policy, quotas or the checks themselves. The checks "
                     "below used the base branch's versions; the owners named in CODEOWNERS must "
                     "review the change:", ""]
            head += [f"- `{f}`" for f in governed]
            head += [f"- {n}" for n in trusted.notes]
            if comparison:
                head += ["", "With the pull request's own policy config, waivers and teams:", "",
                         *comparison]
            head.append("")
        parts = [Part(_title(r), _without_headline(r.markdown) if r.code != 2 else
                      f"⛔ the check could not run (bad input, exit 2):\n\n```\n{r.stderr}\n```")
                 for r in runs]
        run_url = _run_url()
        footer = ("<sub>gpupool "
                  + (f"· [workflow run]({run_url}) " if run_url else "")
                  + f"· stacks checked: {', '.join(stacks) or 'none'}</sub>")
        return assemble("\n".join(head), parts, footer, REPORT_NOTE)


def exit_code(runs: Sequence[Run], counts: dict[str, int], fail_level: str) -> int:
    """2 when a check could not run (whatever the level: unjudged is never green); else 1 when
    the fail level is reached (mandatory: a check failed; advisory: an advisory finding too)."""
    if any(r.code == 2 for r in runs):
        return 2
    if fail_level == "never":
        return 0
    failed = any(r.code == 1 for r in runs)
    if fail_level == "advisory":
        failed = failed or counts.get("warning", 0) > 0
    return 1 if failed else 0


def _without_headline(markdown: str) -> str:
    """A report without its own ``## verdict`` line: the section title says it."""
    lines = markdown.splitlines()
    for i, line in enumerate(lines[:3]):
        if line.startswith("## "):
            return "\n".join(lines[:i] + lines[i + 1:]).lstrip("\n")
    return markdown


def _title(r: Run) -> str:
    name = r.label.removeprefix("stack ")
    what = (f"Stack `{name}`" if r.label.startswith("stack ") else
            "Team quotas across every stack" if r.label == "team quotas" else "Plan files")
    return f"### {what}: {_verdict_word(r.code)}"


def _verdict_word(code: int) -> str:
    return {0: "✅ pass", 1: "❌ fail"}.get(code, "⛔ could not run")


def _file_label(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in label.removeprefix("stack "))


def _run_url() -> str:
    server, repo, run = (os.environ.get(k) for k in
                         ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else ""


def _annotate(level: str, file: str | None, message: str) -> None:
    where = f" file={file}" if file else ""
    flat = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    sys.stdout.write(f"::{level}{where}::{flat}\n")


def _write_outputs(outputs: dict[str, str]) -> None:
    target = os.environ.get("GITHUB_OUTPUT")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as f:
        for key, value in outputs.items():
            f.write(f"{key}={value}\n")


def main(argv: Sequence[str] | None = None) -> int:
    return Action(parse(argv), Path.cwd()).run()


if __name__ == "__main__":
    raise SystemExit(main())
