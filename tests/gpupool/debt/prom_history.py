# ruff: noqa: RUF002, RUF003  (× as users read it)
"""Seven days of a messy GPU cluster, as kube-state-metrics and dcgm-exporter write them.

The series are written as OpenMetrics with explicit timestamps, every ``STEP_S`` (30 min; the
series only the instant queries read, labels and limits, every 6 hours), for ``promtool tsdb
create-blocks-from openmetrics``; the report reads them with ``--resolution 1800``. Label
sets are the pinned exporters' own: kube-state-metrics v2.20.0 (its server test's /metrics,
tests/fixtures/prometheus/kube-state-metrics-v2.20.0-pod0.prom, is backfilled as it is for the
``sample`` pool) and dcgm-exporter 4.5.3-4.8.2 (gpu, UUID, pci_bus_id, device,
modelName, [GPU_I_PROFILE, GPU_I_ID], Hostname, DCGM_FI_DRIVER_VERSION, then the pod's
container, namespace and pod, then its allow-listed labels), with the scrape's job and instance.

The cluster, hour by hour (values constant within an hour, so every figure is hand-computable):

- pool ``onprem`` (L40S, 2 per node, no instance type: on-premises):
  onprem-1: gpu-ml-platform/embeddings-0 and -1, one GPU each at 10 %; a finished Job's pod
  (Succeeded, still exporting its request) that must not count;
  onprem-2: time-sliced ×4 (8 nvidia.com/gpu on 2 GPUs): gpu-research/tune-0..2 share GPU 0
  at 90 % (the exporter repeats its series per pod), tune-3 holds a slice of GPU 1 at 20 %;
  onprem-3: the exporter did not label its pods (empty container/namespace/pod):
  gpu-research/train-0 and gpu-ml-platform/batch-0, GPUs at 50 % and 30 %;
  onprem-4: gpu-ml-platform/embeddings-2 at 40 %, the exporter down for hours 24-47;
  onprem-5: no exporter at all: gpu-research/eval-0 holds both GPUs;
- pool ``lab`` (an on-premises A100 in MIG, mixed strategy: 3g.20gb + 2 × 2g.10gb):
  vision/infer-0 on the 3g instance at GR_ENGINE_ACTIVE 0.5, vision/infer-1 on a 2g at 0.25,
  the other 2g idle and once reporting an impossible 1.5;
- pool ``eks-gpu`` (Karpenter g6.xlarge nodes, NodePool limit 4 GPUs): ip-10-0-1-1 all week,
  gpu-research/infer-l4-0 at GPU_UTIL 30 % but GR_ENGINE_ACTIVE 0.2 (the better measure);
  ip-10-0-1-2 from hour 83:30, sandbox/notebook-0 (no team label) from hour 84 at 50 %;
- pool ``dark`` (g5.xlarge, no exporter): gpu-ml-platform/batch-dark-0 all week;
- pool ``sample``: kube-state-metrics' own pod0 on node1 (1 GPU, namespace default);
- an exporter whose Hostname is its pod's name (no NODE_NAME): matches no node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

HOURS = 168
STEP_S = 1800
PER_HOUR = 3600 // STEP_S
STATE_EVERY_H = 6  # labels, quotas and limits: read with last_over_time, a sample now and then
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "prometheus"
KSM = {"job": "kube-state-metrics", "instance": "10.0.0.5:8080"}
DCGM = {"job": "dcgm-exporter"}
DRIVER = "550.90.07"
Value = Callable[[int, int], float | None]  # (hour, step within the hour) → value, or none


def always(v: float) -> Value:
    return lambda _h, _k: v


def now_and_then(v: float) -> Value:
    return lambda h, k: v if k == 0 and h % STATE_EVERY_H == 0 else None


def hours(v: float, first: int = 0, last: int = HOURS - 1) -> Value:
    return lambda h, _k: v if first <= h <= last else None


@dataclass
class History:
    start: int  # epoch seconds, a multiple of 3600
    families: dict[str, list[tuple[dict[str, str], Value]]] = field(default_factory=dict)

    def add(self, metric: str, labels: dict[str, str], value: Value) -> None:
        self.families.setdefault(metric, []).append((labels, value))

    def lines(self) -> Iterator[str]:
        for metric, series in self.families.items():
            yield f"# TYPE {metric} gauge"
            for labels, value in series:
                text = ",".join(f'{k}="{v}"' for k, v in labels.items())
                for h in range(HOURS):
                    for k in range(PER_HOUR):
                        v = value(h, k)
                        if v is not None:
                            yield f"{metric}{{{text}}} {v:g} {self.start + h * 3600 + k * STEP_S}"
        yield "# EOF"

    def write(self, path: Path) -> int:
        lines = list(self.lines())
        path.write_text("\n".join(lines) + "\n")
        return len(lines)


# --------------------------------------------------------------------------- kube-state-metrics

def node(hist: History, name: str, gpus: dict[str, float], labels: dict[str, str],
         first: float = 0) -> None:
    """A node from hour ``first`` (fractions: part of that hour) to the end of the window."""
    def present(v: float) -> Value:
        return lambda h, k: v if h + k / PER_HOUR >= first else None

    for resource, n in gpus.items():
        hist.add("kube_node_status_allocatable",
                 {"node": name, "resource": resource, "unit": "integer", **KSM}, present(n))
    hist.add("kube_node_labels", {"node": name, **{f"label_{k}": v for k, v in labels.items()},
                                  **KSM}, now_and_then(1))


def namespace(hist: History, name: str, labels: dict[str, str]) -> None:
    hist.add("kube_namespace_labels",
             {"namespace": name, **{f"label_{k}": v for k, v in labels.items()}, **KSM},
             now_and_then(1))


def pod(hist: History, ns: str, name: str, node_name: str, gpus: dict[str, float],
        first: int = 0, phase: str = "Running") -> None:
    uid = f"uid-{ns}-{name}"
    for resource, n in gpus.items():
        hist.add("kube_pod_container_resource_requests",
                 {"namespace": ns, "pod": name, "uid": uid, "container": "main",
                  "node": node_name, "resource": resource, "unit": "integer", **KSM},
                 hours(n, first))
    hist.add("kube_pod_container_resource_requests",
             {"namespace": ns, "pod": name, "uid": uid, "container": "main", "node": node_name,
              "resource": "cpu", "unit": "core", **KSM}, hours(2, first))
    for p in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
        hist.add("kube_pod_status_phase", {"namespace": ns, "pod": name, "uid": uid,
                                           "phase": p, **KSM},
                 hours(1.0 if p == phase else 0.0, first))


# --------------------------------------------------------------------------- dcgm-exporter

def dcgm(hist: History, metric: str, host: str, gpu: int, uuid: str, model: str, value: Value,
         holder: tuple[str, str] | None = None, mig: tuple[str, str] | None = None,
         pod_labels: dict[str, str] | None = None, empty_pod: bool = False) -> None:
    labels = {"gpu": str(gpu), "UUID": uuid, "pci_bus_id": f"00000000:{gpu + 1:02X}:00.0",
              "device": f"nvidia{gpu}", "modelName": model}
    if mig:
        labels |= {"GPU_I_PROFILE": mig[0], "GPU_I_ID": mig[1]}
    labels |= {"Hostname": host, "DCGM_FI_DRIVER_VERSION": DRIVER}
    if holder:
        labels |= {"container": "main", "namespace": holder[0], "pod": holder[1],
                   **(pod_labels or {})}
    elif empty_pod:  # the older exporters' unmapped series (README: container="",…)
        labels |= {"container": "", "namespace": "", "pod": ""}
    hist.add(metric, {**labels, **DCGM, "instance": f"{host}:9400"}, value)


UTIL = "DCGM_FI_DEV_GPU_UTIL"
ENGINE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
L40S = "NVIDIA L40S"


def backfill_real_ksm_sample(hist: History) -> None:
    """kube-state-metrics' own server-test /metrics (pod0 of namespace default, on node1),
    every line of the families the report reads, as they are, every step of the week."""
    wanted = ("kube_pod_container_resource_requests{", "kube_pod_status_phase{")
    for line in (FIXTURES / "kube-state-metrics-v2.20.0-pod0.prom").read_text().splitlines():
        if line.startswith(wanted):
            metric, rest = line.split("{", 1)
            body, value = rest.rsplit("} ", 1)
            labels = dict(part.split("=", 1) for part in body.split('",') if part)
            clean = {k: v.strip('"') for k, v in labels.items()}
            hist.add(metric, {**clean, **KSM}, always(float(value)))
    node(hist, "node1", {"nvidia_com_gpu": 1}, {"gpupool_io_pool": "sample"})


def cluster(start: int) -> History:
    hist = History(start)
    for ns, team, cc, pool in (("gpu-ml-platform", "ml-platform", "cc-ml-1042", "onprem"),
                               ("gpu-research", "research", "cc-research-2001", "onprem"),
                               ("vision", "vision", "cc-vision-7", "lab")):
        namespace(hist, ns, {"team": team, "cost_center": cc, "gpupool_io_pool": pool})
    namespace(hist, "sandbox", {})
    namespace(hist, "kube-system", {"kubernetes_io_metadata_name": "kube-system"})
    onprem = {"gpupool_io_pool": "onprem", "nvidia_com_gpu_product": "NVIDIA-L40S"}
    for i in range(1, 6):
        labels = {**onprem, "nvidia_com_gpu_replicas": "4"} if i == 2 else onprem
        node(hist, f"onprem-{i}", {"nvidia_com_gpu": 8 if i == 2 else 2}, labels)
    ml, rs = "gpu-ml-platform", "gpu-research"
    ml_labels = {"team": "ml-platform", "cost_center": "cc-ml-1042",
                 "app_kubernetes_io_name": "embeddings"}
    # onprem-1: two idle inference pods, and a finished Job's pod still exporting its request
    for g in (0, 1):
        pod(hist, ml, f"embeddings-{g}", "onprem-1", {"nvidia_com_gpu": 1})
        dcgm(hist, UTIL, "onprem-1", g, f"GPU-10{g}", L40S, always(10), (ml, f"embeddings-{g}"),
             pod_labels=ml_labels)
    pod(hist, rs, "job-done-0", "onprem-1", {"nvidia_com_gpu": 1}, phase="Succeeded")
    # onprem-2: time slices; GPU 0 shared by three pods, GPU 1 by one
    for t in range(4):
        pod(hist, rs, f"tune-{t}", "onprem-2", {"nvidia_com_gpu": 1})
    for t in range(3):
        dcgm(hist, UTIL, "onprem-2", 0, "GPU-200", L40S, always(90), (rs, f"tune-{t}"))
    dcgm(hist, UTIL, "onprem-2", 1, "GPU-201", L40S, always(20), (rs, "tune-3"))
    # onprem-3: the exporter did not map the pods
    pod(hist, rs, "train-0", "onprem-3", {"nvidia_com_gpu": 1})
    pod(hist, ml, "batch-0", "onprem-3", {"nvidia_com_gpu": 1})
    dcgm(hist, UTIL, "onprem-3", 0, "GPU-300", L40S, always(50), empty_pod=True)
    dcgm(hist, UTIL, "onprem-3", 1, "GPU-301", L40S, always(30), empty_pod=True)
    # onprem-4: an exporter gap, hours 24-47
    def gap(v: float) -> Value:
        return lambda h, _k: None if 24 <= h <= 47 else v

    pod(hist, ml, "embeddings-2", "onprem-4", {"nvidia_com_gpu": 1})
    dcgm(hist, UTIL, "onprem-4", 0, "GPU-400", L40S, gap(40), (ml, "embeddings-2"),
         pod_labels=ml_labels)
    dcgm(hist, UTIL, "onprem-4", 1, "GPU-401", L40S, gap(0))
    # onprem-5: no exporter
    pod(hist, rs, "eval-0", "onprem-5", {"nvidia_com_gpu": 2})
    # lab: one A100 in MIG (mixed strategy)
    node(hist, "lab-1", {"nvidia_com_mig_3g_20gb": 1, "nvidia_com_mig_2g_10gb": 2},
         {"gpupool_io_pool": "lab", "nvidia_com_gpu_product": "NVIDIA-A100-SXM4-40GB",
          "nvidia_com_mig_strategy": "mixed"})
    a100 = "NVIDIA A100-SXM4-40GB"
    pod(hist, "vision", "infer-0", "lab-1", {"nvidia_com_mig_3g_20gb": 1})
    pod(hist, "vision", "infer-1", "lab-1", {"nvidia_com_mig_2g_10gb": 1})
    dcgm(hist, UTIL, "lab-1", 0, "GPU-500", a100, always(0))  # the MIG GPU's parent series
    dcgm(hist, ENGINE, "lab-1", 0, "GPU-500", a100, always(0.5), ("vision", "infer-0"),
         mig=("3g.20gb", "1"))
    dcgm(hist, ENGINE, "lab-1", 0, "GPU-500", a100, always(0.25), ("vision", "infer-1"),
         mig=("2g.10gb", "2"))
    dcgm(hist, ENGINE, "lab-1", 0, "GPU-500", a100,
         lambda h, k: 1.5 if (h, k) == (100, 1) else 0.0, mig=("2g.10gb", "3"))
    # eks-gpu: Karpenter nodes, the second from hour 83:30
    karpenter = {"gpupool_io_pool": "eks-gpu", "node_kubernetes_io_instance_type": "g6.xlarge",
                 "karpenter_sh_nodepool": "gpupool-eks-gpu"}
    node(hist, "ip-10-0-1-1", {"nvidia_com_gpu": 1}, karpenter)
    node(hist, "ip-10-0-1-2", {"nvidia_com_gpu": 1}, karpenter, first=83.5)
    pod(hist, rs, "infer-l4-0", "ip-10-0-1-1", {"nvidia_com_gpu": 1})
    dcgm(hist, UTIL, "ip-10-0-1-1", 0, "GPU-600", "NVIDIA L4", always(30), (rs, "infer-l4-0"))
    dcgm(hist, ENGINE, "ip-10-0-1-1", 0, "GPU-600", "NVIDIA L4", always(0.2),
         (rs, "infer-l4-0"))
    pod(hist, "sandbox", "notebook-0", "ip-10-0-1-2", {"nvidia_com_gpu": 1}, first=84)
    dcgm(hist, UTIL, "ip-10-0-1-2", 0, "GPU-601", "NVIDIA L4", hours(50, 84),
         ("sandbox", "notebook-0"))
    hist.add("karpenter_nodepools_limit", {"nodepool": "gpupool-eks-gpu",
                                           "resource_type": "nvidia.com/gpu",
                                           "job": "karpenter", "instance": "10.0.0.9:8080"},
             now_and_then(4))
    # dark: a pool with no exporter anywhere
    node(hist, "dark-1", {"nvidia_com_gpu": 1}, {"gpupool_io_pool": "dark",
                                                 "node_kubernetes_io_instance_type": "g5.xlarge"})
    pod(hist, ml, "batch-dark-0", "dark-1", {"nvidia_com_gpu": 1})
    # an exporter without NODE_NAME: its Hostname is its own pod's name
    dcgm(hist, UTIL, "dcgm-exporter-x7k2p", 0, "GPU-700", "Tesla T4", always(77))
    # quotas and KEDA's HPA for the stack's namespaces
    for ns in (ml, rs):
        for resource in ("requests.nvidia.com/gpu", "limits.nvidia.com/gpu"):
            hist.add("kube_resourcequota", {"namespace": ns, "resourcequota": "gpu-quota",
                                            "resource": resource, "type": "hard", **KSM},
                     now_and_then(8))
    hist.add("kube_horizontalpodautoscaler_spec_max_replicas",
             {"namespace": ml, "horizontalpodautoscaler": "keda-hpa-embeddings", **KSM},
             now_and_then(6))
    backfill_real_ksm_sample(hist)
    return hist
