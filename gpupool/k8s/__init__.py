"""Kubernetes manifests of a stack: file layout for GitOps (``render``) and schema validation
(``schemas``). No Pulumi here: the CLI hands over the objects the offline plan registered."""
