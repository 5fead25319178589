#!/usr/bin/env bash
# Install Checkov into its own virtualenv, bench/.venv-checkov (git-ignored). Checkov is only a
# point of comparison for the benchmark; it is no dependency of the kit.
# Usage: bench/setup-checkov.sh [CHECKOV_VERSION]   (default: the latest release on PyPI)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv-checkov"
python="${PYTHON:-python3}"
spec="checkov${1:+==$1}"
if [ ! -x "$venv/bin/checkov" ]; then
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet "$spec"
fi
"$venv/bin/checkov" --version
