import Basics
import EventStore
import Notes

let verifyCommand = Command(
    "verify", abstract: "Check the log (checksums, hash chain, positions, versions) and every projection.",
    usage: ["verify"],
    discussion: "Exit code 0 when all is well; 5 when a problem was found (each is listed with its position).",
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(0...0)
    let book = try ctx.notebook()
    let bar = ctx.progressBar("verifying")
    let problems = try book.verify(progress: bar.map { b in { done, total in b.update(done, of: total) } })
    bar?.finish()
    if ctx.json {
        ctx.printJSON(
            .object([
                ("ok", .bool(problems.isEmpty)),
                (
                    "problems",
                    .array(
                        problems.map {
                            .object([
                                ("kind", .string($0.kind.rawValue)),
                                ("position", $0.position.map { .uint($0) } ?? .null),
                                ("detail", .string($0.detail)),
                            ])
                        })
                ),
            ]))
    } else if problems.isEmpty {
        let stats = try book.stats()
        ctx.terminal.print(
            "ok: \(counted(stats.events, "event")), \(counted(stats.notes, "note")); log, chain and projections verified"
        )
    } else {
        for p in problems { ctx.terminal.print(p.description) }
    }
    if !problems.isEmpty {
        let repair =
            problems.contains { $0.kind == .pages }
            ? "the database file's pages are damaged and the next write could destroy data: write nothing to "
                + "this store (not even `notes rebuild`); restore it from a backup, or save its events with "
                + "`notes export --output FILE` and import them into a new store"
            : problems.allSatisfy({ $0.kind == .projection })
                // Read-only, `notes rebuild` is refused: what rebuilds them is said instead
                // (before 2026-12-07 the read-only store was told to run it, exit 5).
                ? (book.options.readOnly
                    ? "the store is read-only here: open it once with write access, or a copy of its folder "
                        + "(`cp -a`) with --store, to rebuild the projections from the log"
                    : "run `notes rebuild` to rebuild the projections from the log")
                : "the log itself is damaged; restore the store from a backup (or export what is readable)"
        throw CLIError(
            "\(problems.count) problem\(problems.count == 1 ? "" : "s") found; \(repair)", code: .storeUnusable)
    }
}

let rebuildCommand = Command(
    "rebuild", abstract: "Rebuild every projection from the log (repairs damaged projections).", usage: ["rebuild"]
) { ctx in
    try ctx.expectPositionals(0...0)
    let report = try ctx.notebook().rebuild()
    if ctx.json {
        ctx.printJSON(rebuildJSON(report))
    } else {
        ctx.terminal.print(
            "rebuilt the projections from \(counted(report.events, "event")) in \(formatDuration(report.microseconds))")
    }
}

let migrationsCommand = Command(
    "migrations", abstract: "Show when the projections were rebuilt, from which version to which.",
    usage: ["migrations"], readsOnly: true
) { ctx in
    try ctx.expectPositionals(0...0)
    let log = try ctx.notebook().upgradeLog()
    if ctx.json {
        ctx.printJSON(.array(log.map(rebuildJSON)))
    } else if log.isEmpty {
        ctx.terminal.print(ctx.terminal.dim("no rebuilds yet: the projections were built inline from the start"))
    } else {
        ctx.printTable(
            log.map {
                [
                    RFC3339.format(micros: $0.startedAt), counted($0.events, "event"), formatDuration($0.microseconds),
                    ($0.fromVersion ?? "none") + " -> " + $0.toVersion, $0.reason,
                ]
            }, styles: [ctx.terminal.dim])
    }
}

let upgradeCommand = Command(
    "upgrade", abstract: "Show how stored events are lifted to the current schema.",
    usage: ["upgrade --dry-run"],
    discussion: """
        Stored events are never rewritten: old schemas are upcast whenever they are read. This lists, per
        stored (type, schema version), how many events there are and what each becomes: `A + B` is both,
        `A or B` one of them.
        """,
    options: [OptionSpec("dry-run", "only show the plan (the only mode: events are never rewritten)")],
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(0...0)
    guard ctx.flag("dry-run") else {
        throw CLIError("stored events are never rewritten; use `notes upgrade --dry-run` to see how they are read")
    }
    let plan = try ctx.notebook().upgradePlan()
    let registry = try ctx.notebook().store.registry
    if ctx.json {
        ctx.printJSON(
            .array(
                plan.map { p in
                    .object([
                        ("type", .string(p.key.type)), ("schemaVersion", .uint(UInt64(p.key.version))),
                        ("events", .uint(p.count)),
                        ("current", .bool(p.liftsTo == [p.key])),
                        (
                            "liftsTo",
                            p.liftsTo.map { .array($0.map { .string($0.description) }) } ?? .null
                        ),
                    ])
                }))
    } else {
        ctx.printTable(
            plan.map { p in
                // Each event becomes what the wording says: `A + B` both, `A or B` one of them.
                let target: String
                if p.liftsTo == [p.key] {
                    target = "current"
                } else if p.liftsTo != nil {
                    let wording = registry.liftWording(of: p.key)
                    target = wording == "nothing" ? "retired: read as no event" : "upcast to " + wording
                } else {
                    target = "UNREADABLE: no schema or upcaster for it"
                }
                return [p.key.description, counted(p.count, "event"), target]
            }, styles: [{ $0 }, ctx.terminal.dim])
    }
}

func rebuildJSON(_ r: RebuildReport) -> JSONValue {
    .object([
        ("startedAt", .string(RFC3339.format(micros: r.startedAt))),
        ("from", r.fromVersion.map(JSONValue.string) ?? .null),
        ("to", .string(r.toVersion)), ("events", .uint(r.events)), ("microseconds", .int(r.microseconds)),
        ("reason", .string(r.reason)),
    ])
}

func formatDuration(_ micros: Int64) -> String {
    if micros < 1000 { return "\(micros) µs" }
    if micros < 1_000_000 { return "\(micros / 1000) ms" }
    let tenths = micros / 100_000
    return "\(tenths / 10).\(tenths % 10) s"
}
