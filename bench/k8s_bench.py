"""Kubernetes benchmarks: ``gpupool check`` on a directory of N manifests, and ``render prod``.

Side by side in one run, each command in a fresh process, rounds interleaved after a warm-up
(the method of bench/run.py, whose helpers this reuses):

- ``gpupool check DIR --format json`` on N generated manifests (one object per file: GPU
  Deployments, some with two GPUs per container, KEDA ScaledObjects for most of them, Services,
  ConfigMaps, Namespaces and ResourceQuotas);
- ``kubernetes-validate --strict -k 1.31`` on the same files: the schema validator the kit uses
  for ``render`` (a kubeconform-class tool that installs here from PyPI; kubeconform and
  kube-score are Go binaries that no registry reachable here ships);
- the floor: a Python process that reads every file and parses it with PyYAML's libyaml loader
  (``yaml.load_all(..., CSafeLoader)``), nothing else. Goal: check within 3x of it.
- ``gpupool render prod --out DIR`` next to ``gpupool plan prod``. Goal: render under 3 s.

    .venv/bin/python bench/k8s_bench.py [--manifests 10000] [--rounds 3]
    .venv/bin/python bench/k8s_bench.py --only render --rounds 5   # render and plan of prod only

Results print and go to ``bench/results/kubernetes.md`` (``--only render`` replaces its own
section there and keeps the rest).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import BIN, OUT, Series, interleaved, machine, markdown_table, measure  # noqa: E402

PARSE_ONLY = (
    "import sys, pathlib, yaml\n"
    "n = 0\n"
    "for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.yaml')):\n"
    "    n += sum(1 for _ in yaml.load_all(p.read_text(), Loader=yaml.CSafeLoader))\n"
    "print(n)\n"
)


def deployment(i: int, gpus: int) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: model-{i}
  namespace: team-{i % 50}
  labels: {{app: model-{i}, team: team-{i % 50}}}
spec:
  replicas: 1
  selector:
    matchLabels: {{app: model-{i}}}
  template:
    metadata:
      labels: {{app: model-{i}, team: team-{i % 50}}}
    spec:
      containers:
        - name: server
          image: nvcr.io/nvidia/tritonserver:24.08-py3
          ports: [{{containerPort: 8000}}]
          resources:
            limits: {{nvidia.com/gpu: {gpus}, memory: 16Gi}}
            requests: {{cpu: "4", memory: 16Gi}}
      tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
"""


def scaled_object(i: int) -> str:
    return f"""apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {{name: model-{i}, namespace: team-{i % 50}}}
spec:
  scaleTargetRef: {{name: model-{i}}}
  minReplicaCount: 1
  maxReplicaCount: 8
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus-operated.monitoring.svc:9090
        query: sum(DCGM_FI_DEV_GPU_UTIL{{namespace="team-{i % 50}",pod=~"model-{i}-.*"}})
        threshold: "70"
"""


def service(i: int) -> str:
    return f"""apiVersion: v1
kind: Service
metadata: {{name: model-{i}, namespace: team-{i % 50}}}
spec:
  selector: {{app: model-{i}}}
  ports: [{{port: 8000, targetPort: 8000}}]
"""


def config_map(i: int) -> str:
    return f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: model-{i}-config, namespace: team-{i % 50}}}
data:
  MODEL_NAME: model-{i}
  MAX_BATCH: "32"
"""


def write_manifests(n: int, folder: Path) -> Path:
    """N files, one object each; deterministic. Per app: Deployment, ScaledObject (9 apps in 10),
    Service, ConfigMap; one app in 20 asks for 2 GPUs per container; 50 namespaces with quotas."""
    if folder.is_dir() and len(list(folder.glob("*.yaml"))) == n:
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    docs: list[str] = []
    for t in range(50):
        docs.append(f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: team-{t}}}\n")
        docs.append(f"apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: gpu, namespace: "
                    f"team-{t}}}\nspec: {{hard: {{requests.nvidia.com/gpu: \"64\"}}}}\n")
    i = 0
    while len(docs) < n:
        docs.append(deployment(i, 2 if i % 20 == 0 else 1))
        if i % 10:
            docs.append(scaled_object(i))
        docs.append(service(i))
        docs.append(config_map(i))
        i += 1
    for k, text in enumerate(docs[:n]):
        (folder / f"{k:06d}.yaml").write_text(text)
    return folder


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--manifests", type=int, default=10_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--output", default=str(HERE / "results" / "kubernetes.md"))
    p.add_argument("--only", choices=["all", "render"], default="all",
                   help="render: only `render prod` beside `plan prod` (minutes less)")
    args = p.parse_args(argv)
    if args.only == "render":
        return render_only(args)
    py, gp, kv = str(BIN / "python"), str(BIN / "gpupool"), str(BIN / "kubernetes-validate")
    folder = write_manifests(args.manifests, OUT / f"manifests-{args.manifests}")
    files = sorted(str(f) for f in folder.glob("*.yaml"))
    render_out = Path(tempfile.mkdtemp(prefix="gpupool-render-"))
    parse = Series("parse only (PyYAML libyaml, every file)")
    check = Series("gpupool check DIR --format json")
    # minutes per run at 10k files: one run, no warm-up (as bench/run.py does for Checkov)
    validate = Series("kubernetes-validate --strict -k 1.31 (every file)", max_runs=1,
                      warmup=False)
    render = Series("gpupool render prod --out DIR")
    plan = Series("gpupool plan prod")
    jobs = [
        (parse, lambda: measure([py, "-c", PARSE_ONLY, str(folder)], timeout=args.timeout)),
        (check, lambda: measure([gp, "check", str(folder), "--format", "json"],
                                stdout=OUT / "k8s-check.json", timeout=args.timeout,
                                ok_rc=(0, 1))),
        (validate, lambda: measure([kv, "--strict", "--quiet", "-k", "1.31", *files],
                                   timeout=args.timeout, ok_rc=(0, 1))),
        (render, lambda: measure([gp, "render", "prod", "--out", str(render_out)],
                                 timeout=args.timeout)),
        (plan, lambda: measure([gp, "plan", "prod"], timeout=args.timeout)),
    ]
    print(f"{args.manifests} manifests in {folder}, {args.rounds} round(s)", file=sys.stderr)
    interleaved(jobs, args.rounds)
    floor = parse.median("wall") or float("nan")
    rows = []
    for s in (parse, check, validate, render, plan):
        wall, cpu, mem = s.median("wall"), s.median("cpu"), s.median("peak_mib")
        ratio = f"{wall / floor:.2f}x parse" if wall and s in (check, validate) else ""
        rows.append([s.label, f"{wall:.2f} s" if wall else "-", f"{cpu:.2f} s" if cpu else "-",
                     f"{mem:.0f} MiB" if mem else "-", ratio])
    check_wall, render_wall = check.median("wall") or 0, render.median("wall") or 0
    goals = [
        f"check of {args.manifests:,} manifests within 3x of parsing them: "
        f"{check_wall / floor:.2f}x ({'met' if check_wall <= 3 * floor else 'NOT met'})",
        f"render of prod under 3 s: {render_wall:.2f} s wall, {render.median('cpu') or 0:.2f} s "
        f"CPU ({'met' if render_wall < 3 else 'NOT met'} on wall time; a loaded machine "
        "stretches wall time, CPU time is what one idle core would take)",
    ]
    head = ["command", "wall (median)", "CPU", "peak RSS", "ratio"]
    text = "\n".join([
        "# Kubernetes benchmarks (`bench/k8s_bench.py`)", "",
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {machine()}",
        f"- command: `python bench/k8s_bench.py {' '.join(sys.argv[1:])}`".rstrip(),
        f"- input: {args.manifests:,} generated manifests, one object per file "
        f"({sum(Path(f).stat().st_size for f in files) / 2**20:.1f} MiB)", "",
        markdown_table(head, rows), "", *(f"- {g}" for g in goals), ""])
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    shutil.rmtree(render_out, ignore_errors=True)
    return 0


RENDER_SECTION = "## `gpupool render prod` (`--only render`)"


def render_only(args: argparse.Namespace) -> int:
    """``render prod`` and ``plan prod`` side by side; the section replaces its predecessor."""
    gp = str(BIN / "gpupool")
    render_out = Path(tempfile.mkdtemp(prefix="gpupool-render-"))
    render = Series("gpupool render prod --out DIR")
    plan = Series("gpupool plan prod")
    jobs = [
        (render, lambda: measure([gp, "render", "prod", "--out", str(render_out)],
                                 timeout=args.timeout)),
        (plan, lambda: measure([gp, "plan", "prod"], timeout=args.timeout)),
    ]
    machine_line = machine()  # with the load average before the runs add to it
    interleaved(jobs, args.rounds)
    rows = []
    for s in (render, plan):
        wall, cpu, mem = s.median("wall"), s.median("cpu"), s.median("peak_mib")
        rows.append([s.label, f"{wall:.2f} s" if wall else "-", f"{cpu:.2f} s" if cpu else "-",
                     f"{mem:.0f} MiB" if mem else "-"])
    wall, cpu = render.median("wall") or 0, render.median("cpu") or 0
    text = "\n".join([
        RENDER_SECTION, "",
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {machine_line}",
        f"- command: `python bench/k8s_bench.py {' '.join(sys.argv[1:])}`".rstrip(), "",
        markdown_table(["command", "wall (median)", "CPU", "peak RSS"], rows), "",
        f"- render of prod under 3 s: {wall:.2f} s wall, {cpu:.2f} s CPU "
        f"({'met' if wall < 3 else 'NOT met'} on wall time)", ""])
    out = Path(args.output)
    old = out.read_text() if out.exists() else ""
    if RENDER_SECTION in old:  # replace our section (up to the next one), keep the rest
        head, _, tail = old.partition(RENDER_SECTION)
        nxt = tail.find("\n## ")
        old = head + (tail[nxt + 1:] if nxt >= 0 else "")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(old.rstrip("\n") + "\n\n" + text if old.strip() else text)
    print(text)
    shutil.rmtree(render_out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
