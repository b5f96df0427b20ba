#!/usr/bin/env bash
# Runs the whole test suite (installing liblmdb-dev and friends first when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
swift build --build-tests
swift test --skip-build "$@"
