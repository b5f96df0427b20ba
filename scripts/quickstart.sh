#!/usr/bin/env bash
# Sets everything up and runs the main job: builds `notes` (release), installs its man page,
# imports the Swift Evolution sample into the default store and shows a tour of the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
swift build -c release --product notes
bin="$(swift build -c release --show-bin-path)/notes"
mandir="${XDG_DATA_HOME:-$HOME/.local/share}/man/man1"
mkdir -p "$mandir" && cp docs/notes.1 "$mandir/notes.1" 2>/dev/null || true
exec scripts/demo.sh "$bin"
