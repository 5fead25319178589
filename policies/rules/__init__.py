"""The policy rules, one module per policy ID (see base.py for what a rule is)."""
