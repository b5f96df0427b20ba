public import Basics
import EventStore

/// Wiki links and backlinks, now (from the links projection) or as of a past instant (from a
/// replay of the log up to it): see ``LinkResolution`` for the rules.
extension Notebook {
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
        let state: NotebookState
        do {
            let position = try store.read { txn in try store.position(atOrBefore: instant, in: txn) }
            state = try NotebookState.replay(store: store, upTo: position)
        } catch { throw NotesError.wrap(error) }
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
