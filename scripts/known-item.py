#!/usr/bin/env python3
"""Known-item search: does `notes search` put a note first when asked for it by its title?

    scripts/known-item.py NOTES_BINARY STORE [--limit K] [--misses N]

For every active note of STORE (e.g. a store made by `notes import-history` of the Swift
Evolution corpus), two queries are asked through NOTES_BINARY, as a user would type them:
its title as written, and a question, "what is the proposal for " and the title. The rank of
the note among the results (the first K, 10 by default) gives, for each kind of query, the mean
reciprocal rank (0 beyond K), the share of notes ranked first and the share in the first K.
Notes whose title another note has too are left out (either would be right). `--misses N`
prints the N worst-ranked queries of each kind. Exit status 2 on bad arguments, 1 if a
search fails.
"""
import json
import subprocess
import sys


def run(binary, *args):
    out = subprocess.run([binary, *args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(f"known-item: {' '.join(args[:2])} failed (exit {out.returncode}): {out.stderr.strip()}\n")
        sys.exit(1)
    return out.stdout


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    binary, store = argv[1], argv[2]
    limit, misses = 10, 0
    rest = argv[3:]
    while rest:
        if rest[0] == "--limit" and len(rest) > 1:
            limit = int(rest[1])
        elif rest[0] == "--misses" and len(rest) > 1:
            misses = int(rest[1])
        else:
            sys.stderr.write(f"known-item: unknown argument {rest[0]}\n")
            return 2
        rest = rest[2:]
    notes = json.loads(run(binary, "list", "--store", store, "--json", "--limit", "100000", "--no-pager"))
    titles = {}
    for n in notes:
        titles.setdefault(n["title"], []).append(n["id"])
    items = [(ids[0], t) for t, ids in titles.items() if len(ids) == 1 and t.strip()]
    kinds = {"title": lambda t: t, "question": lambda t: "what is the proposal for " + t}
    print(f"{len(items)} notes with a title of their own (of {len(notes)}), top {limit}")
    for kind, make in kinds.items():
        ranks = []
        for note, title in items:
            query = make(title)
            hits = json.loads(
                run(binary, "search", "--store", store, "--json", "--limit", str(limit), "--no-pager", "--", query))
            ids = [h["id"] for h in (hits["results"] if isinstance(hits, dict) else hits)]
            ranks.append((ids.index(note) + 1 if note in ids else None, query))
        found = [r for r, _ in ranks if r is not None]
        mrr = sum(1 / r for r in found) / len(ranks)
        first = sum(1 for r in found if r == 1) / len(ranks)
        top = len(found) / len(ranks)
        print(f"{kind:9} MRR {mrr:.3f}  first {first:.3f}  top {limit} {top:.3f}")
        for r, q in sorted(ranks, key=lambda x: -(x[0] or limit + 1))[:misses]:
            print(f"    {'-' if r is None else r:>3}  {q}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
