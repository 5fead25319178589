"""The Kubernetes objects k8s-gpu-workload-autoscaled's examples are made of (the examples
themselves, beside the rule, say what each shows)."""

from __future__ import annotations

DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "embeddings", "namespace": "ml"},
               "spec": {"selector": {"matchLabels": {"app": "embeddings"}}, "template": {
                   "metadata": {"labels": {"app": "embeddings"}},
                   "spec": {"containers": [{"name": "triton",
                                            "image": "nvcr.io/nvidia/tritonserver:24.08-py3",
                                            "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}
SCALED = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
           "metadata": {"name": "embeddings", "namespace": "ml"},
           "spec": {"scaleTargetRef": {"name": "embeddings"}, "minReplicaCount": 1,
                    "maxReplicaCount": 8, "triggers": [{"type": "prometheus", "metadata": {
                        "serverAddress": "http://prometheus-operated.monitoring.svc:9090",
                        "query": 'sum(DCGM_FI_DEV_GPU_UTIL{namespace="ml"})',
                        "threshold": "70"}}]}}
HPA_CPU = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "embeddings", "namespace": "ml"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "embeddings"},
                     "minReplicas": 1, "maxReplicas": 8, "metrics": [{
                         "type": "Resource", "resource": {"name": "cpu", "target": {
                             "type": "Utilization", "averageUtilization": 70}}}]}}


ISVC = {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
         "metadata": {"name": "llm", "namespace": "ml"},
         "spec": {"predictor": {"minReplicas": 1, "maxReplicas": 4, "model": {
             "modelFormat": {"name": "huggingface"}, "storageUri": "hf://Qwen/Qwen2.5-7B",
             "resources": {"limits": {"nvidia.com/gpu": 1}}}}}}
RAY_SERVICE = {"apiVersion": "ray.io/v1", "kind": "RayService",
                "metadata": {"name": "llm", "namespace": "ml"},
                "spec": {"rayClusterConfig": {
                    "headGroupSpec": {"template": {"spec": {"containers": [
                        {"name": "ray-head", "image": "rayproject/ray-llm:2.52.0"}]}}},
                    "workerGroupSpecs": [{"groupName": "gpu-group", "replicas": 2,
                                          "minReplicas": 1, "maxReplicas": 4,
                                          "template": {"spec": {"containers": [{
                                              "name": "ray-worker",
                                              "image": "rayproject/ray-llm:2.52.0",
                                              "resources": {"limits": {
                                                  "nvidia.com/gpu": 1}}}]}}}]}}}


NIM = {"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMService",
        "metadata": {"name": "llama", "namespace": "nim-service"},
        "spec": {"image": {"repository": "nvcr.io/nim/meta/llama-3.2-1b-instruct",
                           "tag": "1.12.0"},
                 "resources": {"limits": {"nvidia.com/gpu": 1}},
                 "scale": {"enabled": True, "hpa": {
                     "minReplicas": 1, "maxReplicas": 4, "metrics": [{
                         "type": "Pods", "pods": {"metric": {"name": "DCGM_FI_DEV_GPU_UTIL"},
                                                  "target": {"type": "AverageValue",
                                                             "averageValue": "70"}}}]}}}}
LLMISVC = {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "LLMInferenceService",
            "metadata": {"name": "qwen", "namespace": "ml"},
            "spec": {"model": {"uri": "hf://Qwen/Qwen2.5-7B-Instruct"},
                     "scaling": {"minReplicas": 1, "maxReplicas": 6, "wva": {}},
                     "template": {"containers": [{
                         "name": "main", "image": "ghcr.io/llm-d/llm-d:v0.2.0",
                         "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}
# KServe multi-node serving and what it becomes, as the KServe 0.18 release shows them
# (kserve/website @ 05b83a6c, blog/2026-04-29-KServe-0.18-release.md; namespace added)
ISVC_MULTI_NODE = {
    "apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
    "metadata": {"name": "llama3-multinode-mp", "namespace": "ml", "annotations": {
        "serving.kserve.io/deploymentMode": "Standard",
        "serving.kserve.io/autoscalerClass": "none"}},
    "spec": {"predictor": {
        "model": {"runtime": "kserve-vllm-multinode", "modelFormat": {"name": "huggingface"},
                  "storageUri": "pvc://llama-3-70b-pvc/hf/70b_instruction_tuned"},
        "workerSpec": {"pipelineParallelSize": 2, "tensorParallelSize": 4, "containers": [{
            "name": "worker-container", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]}}}}
LLMISVC_MULTI_NODE = {
    "apiVersion": "serving.kserve.io/v1alpha2", "kind": "LLMInferenceService",
    "metadata": {"name": "llama3-70b-autoscaled", "namespace": "ml"},
    "spec": {"model": {"uri": "hf://meta-llama/Llama-3.1-70B-Instruct",
                       "name": "meta-llama--Llama-3.1-70B-Instruct"},
             "parallelism": {"tensor": 4, "data": 8, "dataLocal": 4},
             "scaling": {"minReplicas": 1, "maxReplicas": 4, "wva": {
                 "variantCost": "15.0", "keda": {"pollingInterval": 30, "cooldownPeriod": 300,
                                                 "idleReplicaCount": 0}}},
             "template": {"containers": [{"name": "vllm", "resources": {"limits": {
                 "nvidia.com/gpu": "4"}}}]},
             "worker": {"containers": [{"name": "vllm", "resources": {"limits": {
                 "nvidia.com/gpu": "4"}}}]},
             "router": {"gateway": {"managed": {}}, "route": {"httpRoute": {}},
                        "scheduler": {"pool": {}}}}}
