"""The steps of the gpupool GitHub Action, runnable (and tested) anywhere git runs.

``action.yml`` installs the kit from the action's own ref (a pinned release, or the base
branch's checkout for this repository's workflow) and runs ``python -I -m gpupool.ci.action``
with its inputs in ``GPUPOOL_*`` variables (never spliced into a script). This module then:

1. takes the policy config, waivers and teams file **from the base branch**
   (:mod:`gpupool.ci.trusted`), so a pull request cannot weaken the rules that judge it;
2. picks the stacks to check (:mod:`gpupool.ci.stacks`): those whose files changed against the
   base (every stack when the program, the kit or the teams file changed), or all, or the ones
   named; a stack file named with a control character is refused (exit 2);
3. runs ``gpupool check --stack S --base REF`` per stack, and once over the plan files given
   (Terraform plan JSON, Pulumi preview JSON), writing SARIF and Markdown from one evaluation
   (``--format sarif=FILE --format markdown=FILE``); with a teams file, runs
   ``team-gpu-quota`` once more over every stack's plan joined, since a quota spans stacks;
4. merges the SARIF runs into one upload (one code-scanning category per stack), and writes ONE
   comment within GitHub's 65,536-character limit (:mod:`gpupool.ci.report`);
5. sets the step outputs (:mod:`gpupool.ci.github`: the multiline form with a random
   delimiter, so no value can add an output) and decides the exit code from ``fail-level``.

Every command it runs is logged to ``commands.jsonl`` in the output directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from gpupool.ci import github, sarif
from gpupool.ci.git import Git
from gpupool.ci.inputs import Inputs, parse
from gpupool.ci.report import Context, Run, comment, verdict_word
from gpupool.ci.stacks import StackPicker
from gpupool.ci.trusted import (
    Trusted,
    governed_changes,
    new_teams,
    quota_setting,
    trusted_files,
)
from gpupool.errors import InputError


class Action:
    def __init__(self, inputs: Inputs, cwd: Path) -> None:
        self.i = inputs
        self.cwd = cwd
        self.git = Git(cwd)
        self.out = inputs.out_dir if inputs.out_dir.is_absolute() else cwd / inputs.out_dir
        self.log = self.out / "commands.jsonl"
        self.picker = StackPicker(self.git, cwd, inputs.stacks, inputs.teams)

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
        name = file_label(label)
        sarif_path = self.out / "reports" / f"{name}.sarif"
        md_path = self.out / "reports" / f"{name}.md"
        json_path = self.out / "reports" / f"{name}.json"
        done = self.gpupool("check", *target, *extra, "--format", f"sarif={sarif_path}",
                            "--format", f"markdown={md_path}", "--format", f"json={json_path}")
        if done.returncode == 2 or not md_path.is_file():
            return Run(label, 2 if done.returncode in (0, 2) else done.returncode, "", None,
                       done.stderr.strip() or "gpupool check wrote no report")
        return Run(label, done.returncode, md_path.read_text(encoding="utf-8"),
                   sarif_path if sarif_path.is_file() else None, done.stderr.strip(),
                   cost=_cost_changes(json_path))

    # -- the whole run -------------------------------------------------------------------------

    def run(self) -> int:
        (self.out / "reports").mkdir(parents=True, exist_ok=True)
        self.log.write_text("")
        try:
            return self._run()
        except InputError as e:  # one line each, nothing checked: never green
            for line in e.problems:
                sys.stderr.write(f"gpupool action: {line}\n")
            github.write_outputs({"verdict": "error", "exit-code": "2"})
            return 2

    def _run(self) -> int:
        if self.i.base_ref and not self.git.has_commit(self.i.base_ref):
            raise InputError(f"base ref {self.i.base_ref!r} is not in this checkout: check out "
                             "with fetch-depth: 0 (actions/checkout)")
        changed = self.git.changed(self.i.base_ref) if self.i.base_ref else None
        stacks = self.picker.pick(changed)
        trusted = trusted_files(self.i, self.git, self.cwd, self.out / "trusted", changed)
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
        governed = governed_changes(changed or [], trusted, self.git, self.i.governed)
        comparison = self.compare(stacks, base, trusted) if trusted.changed else []
        return self.finish(runs, stacks, governed, trusted, comparison)

    def quotas_across_stacks(self, trusted: Trusted) -> Run | None:
        """team-gpu-quota over every stack at once: a quota is per team and environment over all
        its stacks, and one ``check --stack`` sees one stack, so a team could otherwise spread
        its GPUs over several stack files. Every stack is planned at the head, the plans are
        joined into one, and only that policy runs on it, with the base branch's teams file."""
        teams = trusted.arg("--teams")
        if teams is None:
            return None
        level = quota_setting(trusted)
        if level is None:
            return None  # the base branch's config disables the policy
        folder = self.out / "plans"
        folder.mkdir(parents=True, exist_ok=True)
        resources: list[object] = []
        for stack in self.picker.every():
            target = folder / f"{file_label(stack)}.json"
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

    def compare(self, stacks: list[str], base: list[str], trusted: Trusted) -> list[str]:
        """The verdict each stack would get with the PR's own policy files: what the change
        would let through (or stop), for the reviewers."""
        lines = []
        for stack in stacks:
            done = self.gpupool("check", "--stack", stack, *base, *trusted.head_args,
                                "--format", "json", "--output",
                                str(self.out / "reports" / f"{file_label(stack)}.head.json"))
            lines.append(f"- stack `{stack}`: {verdict_word(done.returncode)} with this pull "
                         "request's own policy files")
        return lines

    def finish(self, runs: list[Run], stacks: list[str], governed: list[str],
               trusted: Trusted, comparison: list[str]) -> int:
        merged = sarif.merge([(file_label(r.label), r.sarif) for r in runs
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
        text = comment(runs, Context(stacks, governed, trusted, comparison, verdict,
                                     new_teams(trusted), self.i.teams or "the teams file"))
        comment_path = self.out / "comment.md"
        comment_path.write_text(text, encoding="utf-8")
        for f in governed:
            github.annotate("warning", f, "changes what judges pull requests: review by its "
                            "owners (CODEOWNERS) before merging; this run used the base "
                            "branch's rules")
        for r in runs:
            if r.code == 2:
                github.annotate("error", None, f"gpupool check ({r.label}): {r.stderr}")
        github.write_outputs({
            "verdict": verdict, "exit-code": str(code), "sarif": sarif_out,
            "comment": str(comment_path), "stacks": " ".join(stacks),
            "governed-changes": " ".join(governed),
            "mandatory": str(counts["error"]), "advisory": str(counts["warning"])})
        github.append_summary(text)
        sys.stdout.write(f"gpupool action: {verdict}; {len(runs)} check(s), "
                         f"{counts['error']} mandatory, {counts['warning']} advisory; "
                         f"exit {code} (fail-level {self.i.fail_level})\n")
        return code


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


def _cost_changes(path: Path) -> tuple[float | None, ...] | None:
    """Each GPU resource's cost change ($/h) from a check's JSON report (None: unreadable)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        lines = doc.get("cost", [])
        return tuple(c.get("delta_per_hour") if isinstance(c.get("delta_per_hour"), int | float)
                     else None for c in lines)
    except (OSError, ValueError, AttributeError):
        return None


def file_label(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in label.removeprefix("stack "))


def main(argv: Sequence[str] | None = None) -> int:
    return Action(parse(argv), Path.cwd()).run()


if __name__ == "__main__":
    raise SystemExit(main())
