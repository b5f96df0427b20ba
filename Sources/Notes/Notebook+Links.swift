public import Basics
import EventStore

/// Wiki links and backlinks, now (from the links projection) or as of a past instant (from a
/// replay of the log up to it): see ``LinkResolution`` for the rules.
extension Notebook {
    /// Gives note `id` other names that links lead to it by (each one line, like a title; the
    /// same name twice, ignoring case, is kept once); an empty list removes them.
    @discardableResult
    public func setAliases(_ id: Identifier, _ aliases: [String]) throws(NotesError) -> Note {
        let value = try Self.aliasesValue(aliases)
        return try change(id) { note in
            note.properties[NoteProperty.aliases.rawValue, default: ""] == value
                ? [] : [.propertySet(key: NoteProperty.aliases.rawValue, value: value)]
        }
    }

    /// Sets a property of note `id` (see ``NoteProperty``); an empty value removes it. A known
    /// property's value is checked as its meaning asks (aliases one per line, like titles).
    public func setProperty(_ id: Identifier, key: String, value: String) throws(NotesError) {
        let value = try Self.validProperty(key: key, value: value, limit: options.maxBodyBytes)
        _ = try change(id) { note in
            note.properties[key, default: ""] == value ? [] : [.propertySet(key: key, value: value)]
        }
    }

    /// A property's value, checked: a key of 1 to 100 characters with no control character, a
    /// value within `limit` bytes without NUL; aliases as ``aliasesValue(_:)`` makes them.
    package static func validProperty(key: String, value: String, limit: Int) throws(NotesError) -> String {
        guard !key.isEmpty, key.count <= 100, !key.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw .validation(.badPropertyName(key))
        }
        guard value.utf8.count <= limit else { throw .validation(.bodyTooLarge(bytes: value.utf8.count, limit: limit)) }
        guard !value.unicodeScalars.contains("\u{0}") else { throw .validation(.bodyHasNUL) }
        if key == NoteProperty.aliases.rawValue { return try aliasesValue(NoteProperty.lines(value)) }
        return value
    }

    /// The `aliases` property's value for a list of names, checked.
    package static func aliasesValue(_ aliases: [String]) throws(NotesError) -> String {
        var seen: Set<String> = []
        var out: [String] = []
        for a in aliases {
            let name: String
            do { name = try validTitle(a) } catch {
                let reason: String
                switch error {
                case .validation(.titleTooLong(let n, let limit)):
                    reason = "it has \(n) characters; the limit is \(limit)"
                case .validation(.titleNotOneLine): reason = "it contains a line break or control character"
                default: reason = "it is empty"
                }
                throw .validation(.badAlias(String(a.prefix(60)), reason: reason))
            }
            if seen.insert(name.lowercased()).inserted { out.append(name) }
        }
        return out.joined(separator: "\n")
    }

    /// The links of note `id`'s body, in order, with where each leads.
    public func links(of id: Identifier, asOf instant: Int64? = nil) throws(NotesError) -> [OutgoingLink] {
        try withLinkWorld(asOf: instant) { world in
            guard let note = try world.note(id) else { throw Self.missing(id, asOf: instant) }
            return try LinkResolution.outgoing(of: note, in: world)
        }
    }

    /// The links that lead to note `id`, with the notes they are in and their lines.
    public func backlinks(of id: Identifier, asOf instant: Int64? = nil) throws(NotesError) -> [Backlink] {
        try withLinkWorld(asOf: instant) { world in
            guard try world.note(id) != nil else { throw Self.missing(id, asOf: instant) }
            return try LinkResolution.backlinks(to: id, in: world)
        }
    }

    /// Every link of the notebook that leads to no note.
    public func missingLinks(asOf instant: Int64? = nil) throws(NotesError) -> [MissingLink] {
        try withLinkWorld(asOf: instant) { world in try LinkResolution.missing(in: world) }
    }

    /// The notes that link to another note or are linked from one (the rest are orphans).
    public func linkedNotes(asOf instant: Int64? = nil) throws(NotesError) -> Set<Identifier> {
        try withLinkWorld(asOf: instant) { world in try LinkResolution.linked(in: world) }
    }

    private static func missing(_ id: Identifier, asOf instant: Int64?) -> NotesError {
        .notFound(instant.map { .noteBefore($0, id) } ?? .note(id))
    }

    private func withLinkWorld<R>(asOf instant: Int64?, _ body: (borrowing ProjectionOrState) throws -> R)
        throws(NotesError) -> R
    {
        guard let instant else {
            return try read { txn, dbs in
                try body(.projection(ProjectionLinkWorld(txn, databases: dbs, projection: projection)))
            }
        }
        // A forward replay: it keeps every title each note was given, which links resolve by.
        let position = try position(atOrBefore: instant)
        let state: NotebookState
        do { state = try NotebookState.replay(store: store, upTo: position) } catch { throw NotesError.wrap(error) }
        do { return try body(.state(StateLinkWorld(state))) } catch { throw NotesError.wrap(error) }
    }
}

/// One of the two worlds links are read from, so that one body serves both.
enum ProjectionOrState: LinkWorld, ~Copyable {
    case projection(ProjectionLinkWorld)
    case state(StateLinkWorld)

    func holders(of folded: String) throws -> [TitleHolder] {
        switch self {
        case .projection(let w): return try w.holders(of: folded)
        case .state(let w): return try w.holders(of: folded)
        }
    }

    func aliasHolders(of folded: String) throws -> [TitleHolder] {
        switch self {
        case .projection(let w): return try w.aliasHolders(of: folded)
        case .state(let w): return try w.aliasHolders(of: folded)
        }
    }

    func notes(withIDPrefix hex: String) throws -> [Identifier] {
        switch self {
        case .projection(let w): return try w.notes(withIDPrefix: hex)
        case .state(let w): return try w.notes(withIDPrefix: hex)
        }
    }

    func note(_ id: Identifier) throws -> Note? {
        switch self {
        case .projection(let w): return try w.note(id)
        case .state(let w): return try w.note(id)
        }
    }

    func titles(of id: Identifier) throws -> [String] {
        switch self {
        case .projection(let w): return try w.titles(of: id)
        case .state(let w): return try w.titles(of: id)
        }
    }

    func linkers(of key: LinkKey) throws -> [(key: LinkKey, source: Identifier)] {
        switch self {
        case .projection(let w): return try w.linkers(of: key)
        case .state(let w): return try w.linkers(of: key)
        }
    }

    func forEachLink(_ body: (LinkKey, Identifier) throws -> Void) throws {
        switch self {
        case .projection(let w): try w.forEachLink(body)
        case .state(let w): try w.forEachLink(body)
        }
    }
}
