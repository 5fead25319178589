"""Grafana dashboards of the Kubernetes pools: built in :mod:`gpupool.k8s.grafana.dashboard`,
validated against Grafana's dashboard schema in :mod:`gpupool.k8s.grafana.validate`."""
