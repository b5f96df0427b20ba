#!/usr/bin/env python3
"""Tantivy, through its Python binding, as a peer of `notes-bench search` (run by it as a child).

    tantivy_peer.py --notes FILE --tokenizer NAME --limit K --out FILE [--repeat R] [--set NAME MODE FILE]...

Builds an index of the notes file (one note a line: an id, a tab, the text) in a
temporary directory, one text field with the given tokenizer (`default`: lower case; `en_stem`:
lower case and the English Snowball stemmer), Tantivy's default indexing threads (one per
core, as our build uses), and runs each query set
(one query a line) for the top K. MODE `and`: every word must match (the query parser with
conjunction by default; the speed sets). MODE `or`: the question as typed: its words, any of
them, ranked by BM25 (query syntax characters become spaces, the tokenizer splits there anyway,
so no word is read as an operator, a field or a phrase).

Each query is timed around `searcher.search` alone (the query is parsed before, the ids are
read after): the time of a process or of the Python loop would not be Tantivy's. After a warm-up
pass, R timed passes (1 by default); each query keeps its first timed pass's seconds and its
fastest of the R, as `notes-bench search --repeat R` keeps ours. Writes one JSON object to
--out: the version, the build's wall and CPU seconds, and for each set the seconds of each
query (`times`, the fastest; `first`, the first timed pass) and the top-K line numbers of the
notes (from 0). When tantivy cannot be
imported, writes {"skipped": reason} and exits 3.
"""
import argparse
import json
import re
import shutil
import sys
import tempfile
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--notes", required=True)
    p.add_argument("--tokenizer", default="default")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--out", required=True)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--set", nargs=3, action="append", default=[], metavar=("NAME", "MODE", "FILE"))
    args = p.parse_args()

    try:
        import importlib.metadata

        import tantivy

        version = importlib.metadata.version("tantivy")
    except Exception as e:  # ImportError, or a broken install
        with open(args.out, "w") as f:
            json.dump({"skipped": f"cannot import tantivy ({e}); run scripts/bench-deps.sh"}, f)
        sys.exit(3)

    with open(args.notes, encoding="utf-8") as f:
        bodies = [line.rstrip("\n").split("\t", 1)[1] for line in f if line.strip()]

    directory = tempfile.mkdtemp(prefix="tantivy-peer-")
    try:
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name=args.tokenizer)
        builder.add_integer_field("ord", stored=False, fast=True)
        schema = builder.build()
        wall, cpu = time.perf_counter(), time.process_time()
        index = tantivy.Index(schema, path=directory)
        writer = index.writer(heap_size=256_000_000, num_threads=0)
        for n, body in enumerate(bodies):
            writer.add_document(tantivy.Document(body=body, ord=n))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        build_wall, build_cpu = time.perf_counter() - wall, time.process_time() - cpu
        searcher = index.searcher()

        sets = []
        for name, mode, path in args.set:
            with open(path, encoding="utf-8") as f:
                texts = [line.rstrip("\n") for line in f if line.strip()]
            queries = [parse(index, t, mode) for t in texts]
            repeats = max(1, args.repeat)
            times, first, hits = [], [], []
            for run in range(repeats + 1):  # a warm-up pass, then the timed ones
                these = []
                for q in queries:
                    start = time.perf_counter()
                    result = searcher.search(q, args.limit, count=False)
                    these.append(time.perf_counter() - start)
                    if run == repeats:
                        addresses = [address for _, address in result.hits]
                        hits.append([int(v) for v in searcher.fast_field_values("ord", addresses)])
                if run == 1:
                    first, times = these, these
                elif run > 1:
                    times = [min(a, b) for a, b in zip(times, these)]
            sets.append({"name": name, "times": times, "first": first, "hits": hits})
        with open(args.out, "w") as f:
            json.dump(
                {"version": version, "build_wall": build_wall, "build_cpu": build_cpu, "sets": sets},
                f,
            )
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def parse(index, text, mode):
    if mode == "or":
        words = re.sub(r"[^\w\s]|_", " ", text.lower())
        return index.parse_query(words, ["body"])
    # Our syntax's words, phrases and exclusions read the same in Tantivy's parser.
    query, _ = index.parse_query_lenient(text, ["body"], conjunction_by_default=True)
    return query


if __name__ == "__main__":
    main()
