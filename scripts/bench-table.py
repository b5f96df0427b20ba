#!/usr/bin/env python3
"""Turn notes-bench --json output into the README's results table (Markdown on stdout), with
the search comparison of the same run under it when the run had one.

    swift run -c release notes-bench --scale full --json Benchmarks/results/latest.json
    scripts/bench-table.py Benchmarks/results/latest.json > /tmp/table.md

Every number comes from the JSON; nothing is typed by hand. Exit status 2 on a bad file.
"""
import json
import sys


def fmt(v):
    if v is None:
        return "n/a"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def stat(s, unit):
    median, lo, hi = s.get("median"), s.get("min"), s.get("max")
    if median in (None, 0) or lo is None or hi is None:
        return f"{fmt(median)} {unit}"
    spread = (hi - lo) / median * 50
    return f"{fmt(median)} {unit} ±{spread:.0f}%"


def table(doc):
    m = doc["machine"]
    out = [
        f"Machine: {m['cores']} cores, {m['os']}, {m['swift']}; {m['date']}; commit {m['commit']}; "
        f"load average at start {m['load']}.",
        f"Workload: {doc['source']} (scale `{doc['scale']}`; {doc['events']:,} events, {doc['notes']:,} notes); "
        f"suite ran {doc['seconds']:.0f} s.",
        "",
        "| figure | ours (median ± half-spread) | peer or limit, same run | ratio | goal | met |",
        "|---|---|---|---|---|---|",
    ]
    for f in doc["figures"]:
        ours = stat(f["value"], f["unit"])
        extra = "; ".join(f"{k} {v}" for k, v in f.get("extra", {}).items())
        if extra:
            ours += f" ({extra})"
        peer = f.get("peer")
        peer_text = f"{peer['title']}: {stat(peer['value'], peer['unit'])}" if peer else ""
        r = f.get("ratio")
        ratio = "" if r is None else (f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x")
        goal = f.get("goal", "")
        met = {True: "yes", False: "**no**"}.get(f.get("goalMet"), "")
        title = f"`{f['name']}`: {f['title']}"
        out.append(f"| {title} | {ours} | {peer_text} | {ratio} | {goal} | {met} |")
    if doc.get("failures"):
        out.append("")
        out.append("Failed: " + "; ".join(doc["failures"]))
    out.extend(search_report(doc.get("search") or []))
    return "\n".join(out) + "\n"


def search_report(lines):
    """The search comparison of the same run (`notes-bench search`'s report as it printed it):
    its table rows kept together, each other line a paragraph of its own."""
    out = []
    previous_row = False
    for line in lines:
        if not line.strip():
            continue
        row = line.startswith("|")
        if not (row and previous_row):
            out.append("")
        out.append(line)
        previous_row = row
    return out


def main(argv):
    if len(argv) != 2:
        print("usage: bench-table.py RESULTS.json", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as fh:
            doc = json.load(fh)
        sys.stdout.write(table(doc))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"bench-table.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
