#!/bin/sh
# The README's main job: import the committed swift-evolution sample (43 proposals with their
# whole edit histories) into the default store, then take a short tour of what an event-sourced
# notebook can show: listing, search, the history of a much-edited proposal, a diff between two
# of its versions, blame, time travel and tags.
#
# Usage: scripts/demo.sh [PATH-TO-NOTES-BINARY]
#   The binary defaults to .build/release/notes, else .build/debug/notes (run `swift build` first).
#   The store is the default one ($NOTES_STORE, else $XDG_DATA_HOME/notes, else
#   ~/.local/share/notes); set NOTES_STORE=/tmp/demo-store to keep your own notes apart.
#   Importing is idempotent: running the demo twice appends nothing the second time.
set -eu

cd "$(dirname "$0")/.."
notes="${1:-}"
if [ -z "$notes" ]; then
    for candidate in .build/release/notes .build/debug/notes; do
        if [ -x "$candidate" ]; then
            notes="$candidate"
            break
        fi
    done
fi
if [ -z "$notes" ] || [ ! -x "$notes" ]; then
    echo "demo: no notes binary found; run \`swift build -c release\` or pass its path" >&2
    exit 1
fi
sample=Samples/swift-evolution-sample.jsonl
export NO_COLOR="${NO_COLOR:-1}"

header() {
    printf '\n== %s\n' "$1"
    printf '$ notes'
    shift
    for word in "$@"; do printf ' %s' "$word"; done
    printf '\n'
}

# Runs `notes ARGS...` with a header; -n LINES keeps only the first lines of its output.
show() {
    limit=""
    if [ "$1" = "-n" ]; then
        limit="$2"
        shift 2
    fi
    title="$1"
    shift
    header "$title" "$@"
    if [ -n "$limit" ]; then
        "$notes" --no-pager "$@" | head -n "$limit"
    else
        "$notes" --no-pager "$@"
    fi
}

# Whether this build has the command (others are written in parallel; skip what is missing).
has() { "$notes" --help | grep -q "^  $1 "; }

skip() { printf '\n== %s\n(skipped: this build has no `notes %s` command yet)\n' "$1" "$2"; }

show "Import the sample: every revision becomes an event (idempotent)" import-history "$sample"
show "Store statistics" stats
show "The ten most recently updated proposals" list --limit 10

if has search; then
    show -n 10 "Search the full text: every word must match (by its stem), ranked by BM25" search "tuple splat" --exact
    show -n 6 "OR, groups, fields and exclusions" search "title:(tuple OR closure OR protocol) -generic" --exact
    show -n 8 "A typo, and a question: near spellings, then notes with some of the words" search "tupple splat" --limit 3
else
    skip "Search the full text" search
fi

# SE-0117 is the sample's much-edited proposal: 30 revisions in 2016-2024, renamed from
# 0000-non-public-subclassable-by-default.md, retitled twice, reviewed twice.
id=$("$notes" --no-pager list --all | grep -m 1 ' Allow distinguishing between public access' | cut -d ' ' -f 1 || true)
if [ -z "$id" ]; then
    echo "demo: SE-0117 is not in the store; did the import fail?" >&2
    exit 1
fi

if has history; then
    show "History of SE-0117: every version, who and what" history "$id"
else
    skip "History of SE-0117" history
fi
if has diff; then
    show -n 40 "What the second review changed: versions 13 and 16" diff "$id" 13 16
else
    skip "Diff between two versions" diff
fi
if has blame; then
    show -n 15 "Who wrote each line, as of version 10 (first 15 lines)" blame "$id" --at 10
else
    skip "Blame" blame
fi
show "Time travel: the notebook as it was on 2016-07-10" list --all --as-of 2016-07-10
show -n 12 "SE-0117 as it was on 2016-07-10, during its first review" show "$id" --at 2016-07-10
if has tag; then
    # Tagging twice changes nothing, so the demo stays harmless to run again.
    show "Tags nest with /: tag SE-0117 (a tag it has already changes nothing)" tag "$id" access-control review/second
    show "The tag tree with note counts" tags
    show "Notes with a tag or one below it" list --tag review
fi
if has backlinks; then
    # Each note's source is its document's path, so the proposals' Markdown links to one
    # another lead to their notes: SE-0053 links to SE-0031.
    se31=$("$notes" --no-pager list --all | grep -m 1 ' Adjusting `inout` Declarations' | cut -d ' ' -f 1 || true)
    if [ -n "$se31" ]; then
        show "Backlinks: the proposals whose links lead to SE-0031 (its own header's too)" backlinks "$se31"
    fi
fi
