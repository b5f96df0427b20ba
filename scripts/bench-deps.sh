#!/usr/bin/env bash
# Installs what the search benchmark's Tantivy peer needs, when it is missing: a Python venv in
# .build/bench-venv holding the `tantivy` package at the pinned version. `notes-bench search`
# runs Benchmarks/tantivy_peer.py with that venv's python (or $NOTES_BENCH_PYTHON); when the
# venv cannot be made (no python3, no network for pip), the benchmark prints why and skips Tantivy.
set -euo pipefail
TANTIVY_VERSION=0.27.0
cd "$(dirname "$0")/.."
venv=.build/bench-venv
if "$venv/bin/python" -c "import tantivy, importlib.metadata as m; assert m.version('tantivy') == '$TANTIVY_VERSION'" 2>/dev/null; then
    exit 0
fi
command -v python3 >/dev/null || { echo "bench-deps: no python3; the Tantivy peer will be skipped" >&2; exit 1; }
if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
    # Debian's python3 leaves venv and ensurepip to python3-venv.
    echo "installing: python3-venv" >&2
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
fi
mkdir -p .build
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "tantivy==$TANTIVY_VERSION"
