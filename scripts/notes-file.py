#!/usr/bin/env python3
"""Write a notes file for `notes-bench search --notes FILE` from real text: one note a line, 32
hex digits of an id, a tab, the text (its tabs and line breaks as spaces).

    scripts/notes-file.py --beir DIR [DIR ...] > abstracts.tsv
        every document of BEIR-layout collections (corpus.jsonl: title, then text), e.g. those
        scripts/cranfield-to-beir.py writes
    scripts/notes-file.py --history FILE [--revisions] > proposals.tsv
        the documents of an edit history in the swift-evolution corpus format (JSON Lines,
        gzip or not): each document's newest text, or with --revisions every revision's text

The id of a note is the first 128 bits of SHA-256 of where it came from, so a file written
twice is the same byte for byte. Exit status 2 on bad arguments or input.
"""
import gzip
import hashlib
import json
import os
import sys


def note_id(origin):
    return hashlib.sha256(origin.encode("utf-8")).hexdigest()[:32]


def flat(text):
    return " ".join(text.split())


def beir(dirs):
    for d in dirs:
        path = os.path.join(d, "corpus.jsonl")
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                doc = json.loads(line)
                text = flat(" ".join(x for x in (doc.get("title"), doc.get("text")) if x))
                if text:
                    yield note_id(f"{os.path.abspath(d)}:{doc['_id']}"), text


def history(path, revisions):
    opener = gzip.open if path.endswith(".gz") else open
    newest = {}
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            ev = json.loads(line)
            if ev["op"] in ("delete", "rename"):
                newest.pop(ev.get("from", ev["doc"]), None)
            if ev["op"] == "delete":
                continue
            text = flat(ev["text"])
            if revisions and text:
                yield note_id(f"{ev['doc']}@{ev['commit']}:{n}"), text
            newest[ev["doc"]] = text
    if not revisions:
        for doc, text in sorted(newest.items()):
            if text:
                yield note_id(doc), text


def main(argv):
    args = argv[1:]
    try:
        if len(args) >= 2 and args[0] == "--beir":
            notes = beir(args[1:])
        elif args[:1] == ["--history"] and len(args) in (2, 3) and args[2:] in ([], ["--revisions"]):
            notes = history(args[1], revisions=len(args) == 3)
        else:
            print(__doc__.split("\n\n")[1], file=sys.stderr)
            return 2
        out = sys.stdout
        for ident, text in notes:
            out.write(f"{ident}\t{text}\n")
    except (OSError, ValueError, KeyError, TypeError, EOFError) as e:
        print(f"notes-file.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
