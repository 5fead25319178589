"""Kubernetes GPU pools (pulumi-kubernetes): the hybrid half of the kit.

The package re-exports nothing: import the component from :mod:`infra.k8s.pool` and the stack's
pools from :mod:`infra.k8s.stack`, so importing one submodule never drags the package into an
import circle (``infra.k8s`` → ``infra.k8s.pool`` → ``infra.k8s``).
"""
