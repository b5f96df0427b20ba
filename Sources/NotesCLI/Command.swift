/// One subcommand: its help text, options and what it runs.
struct Command: Sendable {
    let name: String
    let abstract: String
    /// Usage after `notes `, e.g. `add TITLE [--body TEXT]`.
    let usage: [String]
    let discussion: String?
    let options: [OptionSpec]
    /// Whether it only reads (a read-only store still works).
    let readsOnly: Bool
    let run: @Sendable (Context) throws -> Void

    init(
        _ name: String, abstract: String, usage: [String], discussion: String? = nil, options: [OptionSpec] = [],
        readsOnly: Bool = false, run: @escaping @Sendable (Context) throws -> Void
    ) {
        self.name = name
        self.abstract = abstract
        self.usage = usage
        self.discussion = discussion
        self.options = options
        self.readsOnly = readsOnly
        self.run = run
    }

    /// The help text, in OVERVIEW / USAGE / OPTIONS layout.
    var help: String {
        var out = "OVERVIEW: \(abstract)\n\nUSAGE:\n"
        for u in usage { out += "  notes \(u)\n" }
        if let discussion { out += "\n" + discussion + "\n" }
        let all = options + globalOptions
        out += "\nOPTIONS:\n"
        out += formatOptions(all)
        return out
    }
}

func formatOptions(_ options: [OptionSpec]) -> String {
    let labels = options.map { o -> String in
        var l = o.short.map { "-\($0), " } ?? ""
        l += "--\(o.name)"
        if let v = o.value { l += " \(v)" }
        return l
    }
    let width = min(28, (labels.map(\.count).max() ?? 0) + 2)
    var out = ""
    for (o, l) in zip(options, labels) {
        if l.count + 2 > width {
            out += "  \(l)\n" + String(repeating: " ", count: width + 2) + o.help + "\n"
        } else {
            out += "  " + l + String(repeating: " ", count: width - l.count) + o.help + "\n"
        }
    }
    return out
}
