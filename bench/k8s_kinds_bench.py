"""``gpupool check`` on N manifests that mix the GPU workload kinds of issue 15, beside parsing
them with PyYAML's libyaml loader (CSafeLoader): the goal is check within 2x of the parse.

Same method as bench/run.py (fresh processes, interleaved rounds after a warm-up, medians; its
helpers are reused). The input is deterministic, one object per file: per app one of the kinds
below in turn (GPU pods, one in seven with two GPUs per container), the autoscalers their
kinds take (a KEDA ScaledObject for Deployments, an HPA for LeaderWorkerSets), a Service and a
ConfigMap; 50 namespaces with GPU quotas. Kinds: Deployment, PyTorchJob, RayCluster (autoscaler
on), InferenceService, LeaderWorkerSet, NIMService, Volcano Job, Argo Workflow, TrainJob,
RayService, LLMInferenceService, JobSet, and a Katib Experiment (a kind no reader understands).

    .venv/bin/python bench/k8s_kinds_bench.py [--manifests 10000] [--rounds 3]
    .venv/bin/python bench/k8s_kinds_bench.py --profile      # cProfile of one in-process check
    .venv/bin/python bench/k8s_kinds_bench.py --baseline main  # and the code of main, same rounds

Results print and go to ``bench/results/kubernetes-kinds.md``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from k8s_bench import PARSE_ONLY  # noqa: E402
from run import BIN, OUT, Series, interleaved, machine, markdown_table, measure  # noqa: E402


def _container(name: str, gpus: int, indent: int) -> str:
    pad = " " * indent
    return (f"{pad}- name: {name}\n{pad}  image: nvcr.io/nvidia/pytorch:24.08-py3\n"
            f"{pad}  resources:\n{pad}    limits: {{nvidia.com/gpu: {gpus}, memory: 16Gi}}\n"
            f"{pad}    requests: {{cpu: \"4\", memory: 16Gi}}\n")


def _pod(gpus: int, indent: int) -> str:
    pad = " " * indent
    return (f"{pad}metadata:\n{pad}  labels: {{team: ml}}\n{pad}spec:\n{pad}  containers:\n"
            + _container("main", gpus, indent + 4)
            + f"{pad}  tolerations: [{{key: nvidia.com/gpu, operator: Exists}}]\n")


def _meta(kind: str, api: str, i: int) -> str:
    return (f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: app-{i}\n"
            f"  namespace: team-{i % 50}\n")


def deployment(i: int, g: int) -> list[str]:
    scaled = (_meta("ScaledObject", "keda.sh/v1alpha1", i)
              + f"spec:\n  scaleTargetRef: {{name: app-{i}}}\n  minReplicaCount: 1\n"
              "  maxReplicaCount: 8\n  triggers:\n  - type: prometheus\n    metadata:\n"
              "      serverAddress: http://prometheus.monitoring:9090\n"
              f"      query: avg(DCGM_FI_DEV_GPU_UTIL{{pod=~\"app-{i}-.*\"}})\n"
              "      threshold: \"70\"\n")
    return [_meta("Deployment", "apps/v1", i) + "spec:\n  replicas: 1\n  selector:\n"
            f"    matchLabels: {{app: app-{i}}}\n  template:\n" + _pod(g, 4), scaled]


def pytorch_job(i: int, g: int) -> list[str]:
    return [_meta("PyTorchJob", "kubeflow.org/v1", i) + "spec:\n  runPolicy:\n"
            "    activeDeadlineSeconds: 86400\n  pytorchReplicaSpecs:\n    Master:\n"
            "      replicas: 1\n      template:\n" + _pod(g, 8)
            + "    Worker:\n      replicas: 3\n      template:\n" + _pod(g, 8)]


def ray_cluster(i: int, g: int, kind: str = "RayCluster") -> list[str]:
    body = ("  enableInTreeAutoscaling: true\n  headGroupSpec:\n"
            "    rayStartParams: {num-gpus: \"0\"}\n"
            "    template:\n      spec:\n        containers:\n        - name: ray-head\n"
            "          image: rayproject/ray:2.46.0\n  workerGroupSpecs:\n  - groupName: gpu\n"
            "    replicas: 1\n    minReplicas: 1\n    maxReplicas: 8\n    template:\n"
            + _pod(g, 6))
    if kind == "RayService":
        body = "  serveConfigV2: |\n    applications: []\n  rayClusterConfig:\n" + "\n".join(
            "  " + line if line else line for line in body.split("\n"))
    return [_meta(kind, "ray.io/v1", i) + "spec:\n" + body]


def inference_service(i: int, g: int) -> list[str]:
    return [_meta("InferenceService", "serving.kserve.io/v1beta1", i)
            + "spec:\n  predictor:\n    minReplicas: 1\n    maxReplicas: 4\n    model:\n"
            "      modelFormat: {name: huggingface}\n      storageUri: hf://Qwen/Qwen2.5-7B\n"
            f"      resources:\n        limits: {{nvidia.com/gpu: {g}}}\n"]


def leader_worker_set(i: int, g: int) -> list[str]:
    hpa = (_meta("HorizontalPodAutoscaler", "autoscaling/v2", i)
           + "spec:\n  scaleTargetRef:\n    apiVersion: leaderworkerset.x-k8s.io/v1\n"
           f"    kind: LeaderWorkerSet\n    name: app-{i}\n  minReplicas: 1\n  maxReplicas: 4\n"
           "  metrics:\n  - type: Pods\n    pods:\n      metric: {name: DCGM_FI_DEV_GPU_UTIL}\n"
           "      target: {type: AverageValue, averageValue: \"70\"}\n")
    return [_meta("LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1", i)
            + "spec:\n  replicas: 2\n  leaderWorkerTemplate:\n    size: 2\n"
            "    workerTemplate:\n" + _pod(g, 6), hpa]


def nim_service(i: int, g: int) -> list[str]:
    return [_meta("NIMService", "apps.nvidia.com/v1alpha1", i)
            + "spec:\n  image: {repository: nvcr.io/nim/meta/llama-3.1-8b-instruct, tag: 1.3.3}\n"
            f"  replicas: 1\n  resources:\n    limits: {{nvidia.com/gpu: {g}}}\n  scale:\n"
            "    enabled: true\n    hpa:\n      minReplicas: 1\n      maxReplicas: 4\n"
            "      metrics:\n      - type: Object\n        object:\n"
            "          metric: {name: gpu_cache_usage_perc}\n"]


def volcano_job(i: int, g: int) -> list[str]:
    return [_meta("Job", "batch.volcano.sh/v1alpha1", i) + "spec:\n  minAvailable: 3\n"
            "  schedulerName: volcano\n  tasks:\n  - name: worker\n    replicas: 3\n"
            "    template:\n" + _pod(g, 6)]


def argo_workflow(i: int, g: int) -> list[str]:
    return [_meta("Workflow", "argoproj.io/v1alpha1", i) + "spec:\n  entrypoint: train\n"
            "  activeDeadlineSeconds: 7200\n  templates:\n  - name: train\n    container:\n"
            "      image: nvcr.io/nvidia/pytorch:24.08-py3\n      command: [python, train.py]\n"
            f"      resources:\n        limits: {{nvidia.com/gpu: {g}}}\n"]


def train_job(i: int, g: int) -> list[str]:
    return [_meta("TrainJob", "trainer.kubeflow.org/v1alpha1", i)
            + "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: 2\n"
            f"    resourcesPerNode:\n      limits: {{nvidia.com/gpu: {g}}}\n"]


def llm_inference_service(i: int, g: int) -> list[str]:
    return [_meta("LLMInferenceService", "serving.kserve.io/v1alpha2", i)
            + "spec:\n  model: {uri: hf://Qwen/Qwen2.5-7B-Instruct}\n  replicas: 2\n"
            "  scaling: {minReplicas: 1, maxReplicas: 6, wva: {}}\n  template:\n"
            "    containers:\n" + _container("main", g, 4)]


def job_set(i: int, g: int) -> list[str]:
    return [_meta("JobSet", "jobset.x-k8s.io/v1alpha2", i) + "spec:\n  replicatedJobs:\n"
            "  - name: workers\n    replicas: 2\n    template:\n      spec:\n"
            "        parallelism: 2\n        activeDeadlineSeconds: 3600\n        template:\n"
            + _pod(g, 10)]


def experiment(i: int, g: int) -> list[str]:
    return [_meta("Experiment", "kubeflow.org/v1beta1", i) + "spec:\n  maxTrialCount: 4\n"
            "  trialTemplate:\n    trialSpec:\n      apiVersion: batch/v1\n      kind: Job\n"
            "      spec:\n        template:\n" + _pod(g, 10)]


KINDS: list[Callable[[int, int], list[str]]] = [
    deployment, pytorch_job, ray_cluster, inference_service, leader_worker_set, nim_service,
    volcano_job, argo_workflow, train_job, lambda i, g: ray_cluster(i, g, "RayService"),
    llm_inference_service, job_set, experiment,
]


def _service(i: int) -> str:
    return (f"apiVersion: v1\nkind: Service\nmetadata: {{name: app-{i}, namespace: team-{i % 50}}}"
            f"\nspec:\n  selector: {{app: app-{i}}}\n  ports: [{{port: 8000}}]\n")


def _config_map(i: int) -> str:
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: app-{i}-config, namespace: "
            f"team-{i % 50}}}\ndata:\n  MODEL_NAME: app-{i}\n  MAX_BATCH: \"32\"\n")


def write_manifests(n: int, folder: Path) -> Path:
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
        docs += KINDS[i % len(KINDS)](i, 2 if i % 7 == 0 else 1)
        docs += [_service(i), _config_map(i)]
        i += 1
    for k, text in enumerate(docs[:n]):
        (folder / f"{k:06d}.yaml").write_text(text)
    return folder


def profile(folder: Path) -> int:
    import cProfile
    import pstats

    from gpupool.cli import main

    prof = cProfile.Profile()
    prof.runcall(main, ["check", str(folder), "--format", "json", "--output", "/dev/null"])
    pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--manifests", type=int, default=10_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--profile", action="store_true", help="cProfile one check, in process")
    p.add_argument("--output", default=str(HERE / "results" / "kubernetes-kinds.md"))
    p.add_argument("--baseline", metavar="REF",
                   help="also time gpupool check of git ref REF in the same rounds")
    args = p.parse_args(argv)
    folder = write_manifests(args.manifests, OUT / f"manifests-kinds-{args.manifests}")
    if args.profile:
        return profile(folder)
    py, gp = str(BIN / "python"), str(BIN / "gpupool")
    parse = Series("parse only (PyYAML CSafeLoader, every file)")
    check = Series("gpupool check DIR --format json")
    jobs = [
        (parse, lambda: measure([py, "-c", PARSE_ONLY, str(folder)], timeout=args.timeout)),
        (check, lambda: measure([gp, "check", str(folder), "--format", "json"],
                                stdout=OUT / "k8s-kinds-check.json", timeout=args.timeout,
                                ok_rc=(0, 1))),
    ]
    before = Series(f"gpupool check DIR --format json, code of {args.baseline}")
    if args.baseline:  # as bench/check_bench.py: the ref's tree first on PYTHONPATH
        import os

        from check_bench import export

        env = {**os.environ, "PYTHONPATH": str(export(args.baseline))}
        jobs.append((before, lambda: measure([gp, "check", str(folder), "--format", "json"],
                                             env=env, timeout=args.timeout, ok_rc=(0, 1))))
    machine_line = machine()
    print(f"{args.manifests} manifests in {folder}, {args.rounds} round(s)", file=sys.stderr)
    interleaved(jobs, args.rounds)
    wall0, cpu0 = parse.median("wall") or float("nan"), parse.median("cpu") or float("nan")
    rows = []
    for s in (parse, check, *([before] if args.baseline else [])):
        wall, cpu, mem = s.median("wall"), s.median("cpu"), s.median("peak_mib")
        rows.append([s.label, f"{wall:.2f} s" if wall else "-", f"{cpu:.2f} s" if cpu else "-",
                     f"{mem:.0f} MiB" if mem else "-",
                     f"{wall / wall0:.2f}x wall, {cpu / cpu0:.2f}x CPU" if wall and cpu else ""])
    wall1, cpu1 = check.median("wall") or 0, check.median("cpu") or 0
    goal = (f"check of {args.manifests:,} manifests mixing the new kinds within 2x of parsing "
            f"them: {wall1 / wall0:.2f}x wall, {cpu1 / cpu0:.2f}x CPU "
            f"({'met' if wall1 <= 2 * wall0 else 'NOT met'} on wall time)")
    files = list(folder.glob("*.yaml"))
    text = "\n".join([
        "# Kubernetes kinds benchmark (`bench/k8s_kinds_bench.py`)", "",
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {machine_line}",
        f"- command: `python bench/k8s_kinds_bench.py {' '.join(sys.argv[1:])}`".rstrip(),
        f"- input: {args.manifests:,} generated manifests, one object per file "
        f"({sum(f.stat().st_size for f in files) / 2**20:.1f} MiB), {len(KINDS)} workload kinds",
        "", markdown_table(["command", "wall (median)", "CPU", "peak RSS", "ratio"], rows), "",
        f"- {goal}", ""])
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
