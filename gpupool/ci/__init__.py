"""The pull-request action's logic (``action.yml`` runs ``python -I -m gpupool.ci.action``).

It only runs ``gpupool`` commands and arranges their reports, so it lives in the core package
and imports neither ``policies`` nor ``infra``: the checker it runs is the installed kit.
"""
