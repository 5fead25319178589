"""Entry point of the ``gpupool`` CrossGuard pack (``pulumi preview --policy-pack policies``).

The CLI runs this file with the pack directory as the script directory, so the repository root
is put on ``sys.path`` when the ``policies`` package is not installed (it is, in ``.venv``).
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import policies.pack  # noqa: F401
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from policies.pack import serve

if __name__ == "__main__":
    serve()
