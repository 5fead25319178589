"""Makes ``netcheck_support`` importable and its fixtures visible (importlib mode)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from netcheck_support import netns_pair, server

__all__ = ["netns_pair", "server"]
