#!/usr/bin/env python3
"""Converts the raw Cranfield collection to the BEIR layout `notes-bench search --collection` reads.

    scripts/cranfield-to-beir.py RAW_DIR OUT_DIR
    scripts/cranfield-to-beir.py --cisi RAW_DIR OUT_DIR
    scripts/cranfield-to-beir.py --cacm RAW_DIR OUT_DIR
    scripts/cranfield-to-beir.py --npl RAW_DIR OUT_DIR

(`--cisi` and `--cacm`: the CISI and CACM collections of the same era and format, CISI.ALL,
CISI.QRY and CISI.REL, or cacm.all, query.text and qrels.text, whose query ids match their
judgments (CACM's written with leading zeros there) and whose judgments are binary: every pair
gets gain 1. A document is its .T title and .W text; the other fields are left out.
`--npl`: the NPL collection (11,429 electronic engineering abstracts, 93 queries, binary
judgments) in the TREC form Terrier ships in `share/vaswani_npl`: corpus/doc-text.trec
(`<DOC><DOCNO>id</DOCNO> text </DOC>`, no titles), query-text.trec
(`<top><num>id</num><title> text </title></top>`) and qrels (`query 0 document 1`).)

RAW_DIR holds the three classic files: cran.all.1400 (documents: .I id, .T title, .A authors,
.B reference, .W text), cran.qry (queries: .I id, .W text) and cranqrel (query, document, code).
OUT_DIR gets corpus.jsonl (_id, title, text), queries.jsonl (_id, text) and qrels/test.tsv
(query-id, corpus-id, score, with a header line).

Two things the raw files need:
- Query ids: cran.qry numbers its 225 queries 1 to 365 with gaps, while cranqrel numbers them
  1 to 225 in file order; the queries are renumbered 1 to 225 in file order to match.
- Grades: Cleverdon's codes are 1 (a complete answer) to 4 (of minimum interest), and -1 (no
  interest); the gain written is 5 - code (4 to 1), and 0 for -1 (judged, not relevant).
"""
import json
import os
import sys


def records(path):
    """Yields (id, {field letter: text}) for each `.I` record of a Cranfield file."""
    current = None
    field = None
    with open(path, encoding="latin-1") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line.startswith(".I "):
                if current is not None:
                    yield current
                current = (line[3:].strip(), {})
                field = None
            elif len(line.strip()) == 2 and line[0] == "." and line[1].isupper():
                field = line[1]
                current[1].setdefault(field, [])
            elif current is not None and field is not None:
                current[1][field].append(line.strip())
    if current is not None:
        yield current


def npl(raw, out):
    """The NPL collection in Terrier's TREC form (see the docstring) to the BEIR layout."""
    import re

    os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
    with open(os.path.join(raw, "corpus", "doc-text.trec"), encoding="latin-1") as f:
        docs = re.findall(r"<DOCNO>\s*(\S+?)\s*</DOCNO>(.*?)</DOC>", f.read(), re.S)
    with open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as f:
        for doc_id, body in docs:
            f.write(json.dumps({"_id": doc_id, "title": "", "text": " ".join(body.split())}) + "\n")
    with open(os.path.join(raw, "query-text.trec"), encoding="latin-1") as f:
        queries = re.findall(r"<num>\s*(\S+?)\s*</num>\s*<title>(.*?)</title>", f.read(), re.S)
    with open(os.path.join(out, "queries.jsonl"), "w", encoding="utf-8") as f:
        for query_id, body in queries:
            f.write(json.dumps({"_id": query_id, "text": " ".join(body.split())}) + "\n")
    def row(cols, line):
        if len(cols) != 4:
            sys.exit(f"qrels: expected 4 columns, got {line!r}")
        return cols[0], cols[2], 1 if int(cols[3]) > 0 else 0

    judgments = write_judgments(os.path.join(raw, "qrels"), out, row)
    print(f"{len(docs)} documents, {len(queries)} queries, {judgments} judgments -> {out}")


def write_judgments(path, out, row):
    """Writes OUT/qrels/test.tsv from the judgments file at `path`, each non-blank line's
    columns made (query, document, gain) by `row`; returns how many."""
    judgments = 0
    with open(path, encoding="utf-8") as f, open(os.path.join(out, "qrels", "test.tsv"), "w", encoding="utf-8") as g:
        g.write("query-id\tcorpus-id\tscore\n")
        for line in f:
            cols = line.split()
            if not cols:
                continue
            query, document, gain = row(cols, line)
            g.write(f"{query}\t{document}\t{gain}\n")
            judgments += 1
    return judgments


def text(fields, letter):
    return " ".join(" ".join(fields.get(letter, [])).split())


def main():
    args = sys.argv[1:]
    kind = args[0][2:] if args[:1] in (["--cisi"], ["--cacm"], ["--npl"]) else "cranfield"
    if kind != "cranfield":
        args = args[1:]
    if len(args) != 2:
        sys.exit("usage: cranfield-to-beir.py [--cisi | --cacm | --npl] RAW_DIR OUT_DIR")
    raw, out = args
    if kind == "npl":
        return npl(raw, out)
    names = {
        "cranfield": ("cran.all.1400", "cran.qry", "cranqrel"),
        "cisi": ("CISI.ALL", "CISI.QRY", "CISI.REL"),
        "cacm": ("cacm.all", "query.text", "qrels.text"),
    }[kind]
    os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
    documents = 0
    with open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as f:
        for doc_id, fields in records(os.path.join(raw, names[0])):
            f.write(json.dumps({"_id": doc_id, "title": text(fields, "T"), "text": text(fields, "W")}) + "\n")
            documents += 1
    queries = 0
    with open(os.path.join(out, "queries.jsonl"), "w", encoding="utf-8") as f:
        for n, (query_id, fields) in enumerate(records(os.path.join(raw, names[1])), start=1):
            if not text(fields, "W"):
                continue  # an empty record (one copy of CACM ends with `.I 0`)
            number = str(int(query_id)) if kind != "cranfield" else str(n)
            f.write(json.dumps({"_id": number, "text": text(fields, "W")}) + "\n")
            queries += 1
    def row(cols, line):
        if kind != "cranfield":
            return str(int(cols[0])), str(int(cols[1])), 1
        if len(cols) != 3:
            sys.exit(f"cranqrel: expected 3 columns, got {line!r}")
        code = int(cols[2])
        return cols[0], cols[1], 5 - code if 1 <= code <= 4 else 0

    judgments = write_judgments(os.path.join(raw, names[2]), out, row)
    print(f"{documents} documents, {queries} queries, {judgments} judgments -> {out}")


if __name__ == "__main__":
    main()
