public import Basics
package import EventStore
import LMDB

/// A node of the tag tree as `notes tags` shows it: a tag, or a parent that no tag is named
/// after but that tags nest under (`work` when only `work/acme` exists).
public struct TagSummary: Sendable, Equatable {
    /// The full name (`work/acme`).
    public var name: String
    /// Notes (not in the trash) tagged with exactly this tag; 0 for a parent that is no tag.
    public var count: Int
    /// Notes (not in the trash) tagged with it or any tag below it, each counted once.
    public var total: Int
    /// The tag, or nil for a parent that is no tag.
    public var id: Identifier?

    /// How deep it nests: 0 for `work`, 1 for `work/acme`.
    public var depth: Int { name.reduce(0) { $1 == "/" ? $0 + 1 : $0 } }
    /// The last part of the name (`acme`).
    public var leaf: Substring { name.split(separator: "/", omittingEmptySubsequences: false).last ?? "" }
}

/// What a tag deletion did.
public struct TagDeletion: Sendable, Equatable {
    /// The tags deleted: the one named and those below it, by name.
    public var tags: [String]
    /// Notes that were untagged.
    public var notes: Int
}

extension Notebook {
    public static let maxTagCharacters = 200

    /// A tag name as it is kept: trimmed, each part between slashes trimmed, no part empty.
    package static func validTagName(_ name: String) throws(NotesError) -> String {
        if plainTagName(name) { return name }
        return try validTagNameByCharacters(name)
    }

    /// Whether `name` is a valid tag name as it is, checked byte by byte: ASCII within the limit,
    /// without control characters, its parts (between `/`) neither empty nor starting or ending
    /// with a space. Any other name goes the general way, which this shortcut is tested against
    /// (walking the characters, splitting and joining the parts cost 11,000 instructions a name,
    /// several a file in `import-markdown`).
    static func plainTagName(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { b in
            guard !b.isEmpty, b.count <= maxTagCharacters else { return false }
            var previous: UInt8 = UInt8(ascii: "/")
            for c in b {
                if c < 0x20 || c >= 0x7F { return false }
                if c == UInt8(ascii: "/") && (previous == UInt8(ascii: "/") || previous == 0x20) { return false }
                if c == 0x20 && previous == UInt8(ascii: "/") { return false }
                previous = c
            }
            return previous != UInt8(ascii: "/") && previous != 0x20
        }
    }

    /// ``validTagName(_:)`` a character at a time, for any name.
    static func validTagNameByCharacters(_ name: String) throws(NotesError) -> String {
        let t = trim(name)
        guard !t.isEmpty else { throw .validation(.emptyTagName) }
        guard !t.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .validation(.tagNameHasControlCharacter(t))
        }
        let parts = t.split(separator: "/", omittingEmptySubsequences: false).map { trim(String($0)) }
        guard !parts.contains(where: \.isEmpty) else { throw .validation(.tagNameHasEmptyPart(t)) }
        let joined = parts.joined(separator: "/")
        guard joined.count <= maxTagCharacters else {
            throw .validation(.tagNameTooLong(characters: joined.count, limit: maxTagCharacters))
        }
        return joined
    }

    /// Valid, distinct (without regard to case) tag names, in the order given.
    package static func validTagNames(_ names: [String]) throws(NotesError) -> [String] {
        var out: [String] = []
        var keys: Set<String> = []
        for n in names {
            let v = try validTagName(n)
            if keys.insert(v.lowercased()).inserted { out.append(v) }
        }
        return out
    }

    /// Tags the note with each of `names` (created when no tag has the name); tags it already
    /// has append nothing.
    @discardableResult
    public func tag(_ id: Identifier, with names: [String]) throws(NotesError) -> Note {
        try tag(id, with: names, typed: false)
    }

    /// ``tag(_:with:)`` of names typed at a command (`typed`): a name holding a C1 control
    /// (``validCommandTagName(_:)``) is taken only when a tag has it already (an import brought
    /// it), as `untag` and a rename's old name look it up; a new one is refused. Before
    /// 2026-12-07 `notes tag ID NAME` refused such a name even when the tag existed.
    @discardableResult
    package func tag(_ id: Identifier, with names: [String], typed: Bool) throws(NotesError) -> Note {
        let names = try Self.validTagNames(names)
        return try write { session, dbs in
            guard let note = try projection.note(id, in: session.transaction, databases: dbs) else {
                throw Self.missing(id)
            }
            // Checked before any tag is made, so that a refusal leaves nothing to undo.
            for name in names where typed {
                do { _ = try Self.validCommandTagName(name) } catch {
                    if try projection.tag(named: name, in: session.transaction, databases: dbs) == nil { throw error }
                }
            }
            var events: [NoteEvent] = []
            var added = Set(note.tags)
            var command: Identifier?
            for name in names {
                let t = try ensureTag(name, session: session, dbs: dbs, command: &command)
                if added.insert(t).inserted { events.append(.tagged(tag: t)) }
            }
            guard !events.isEmpty else { return note }
            return try append(
                events, to: id, expecting: .exact(note.version), session: session, dbs: dbs, command: command)
        }
    }

    /// Removes each of `names` from the note's tags (exactly those tags, not the ones below
    /// them); a tag the note does not have appends nothing. A name no tag has is not found.
    @discardableResult
    public func untag(_ id: Identifier, from names: [String]) throws(NotesError) -> Note {
        let names = try Self.validTagNames(names)
        return try write { session, dbs in
            guard let note = try projection.note(id, in: session.transaction, databases: dbs) else {
                throw Self.missing(id)
            }
            var events: [NoteEvent] = []
            for name in names {
                guard let t = try projection.tag(named: name, in: session.transaction, databases: dbs) else {
                    throw NotesError.notFound(.tag(name: name))
                }
                if note.tags.contains(t.id) { events.append(.untagged(tag: t.id)) }
            }
            guard !events.isEmpty else { return note }
            return try append(events, to: id, expecting: .exact(note.version), session: session, dbs: dbs)
        }
    }

    /// The live tag called `name` (case-insensitive), or a not-found error.
    public func tag(named name: String) throws(NotesError) -> Tag {
        let t = try read { txn, dbs in try projection.tag(named: Self.trim(name), in: txn, databases: dbs) }
        guard let t else { throw .notFound(.tag(name: name)) }
        return t
    }

    /// Every live tag.
    public func allTags() throws(NotesError) -> [Tag] {
        try read { txn, dbs in try projection.tags(in: txn, databases: dbs) }
            .sorted { ($0.name.lowercased(), $0.id) < ($1.name.lowercased(), $1.id) }
    }

    /// The tag tree: every tag and every parent tags nest under, in tree order, each with its
    /// own count and the count of notes below it.
    public func tagTree() throws(NotesError) -> [TagSummary] {
        try read { txn, dbs in
            let tags = try projection.tags(in: txn, databases: dbs)
            var members: [Identifier: Set<Identifier>] = [:]
            for t in tags {
                members[t.id] = try projection.notes(
                    taggedWithAnyOf: [t.id], statuses: [.active, .archived], in: txn, databases: dbs)
            }
            return TagTree.summaries(tags, members: { members[$0] ?? [] })
        }
    }

    /// The live tags called `name` or nested below it: what `list --tag name` matches. A name
    /// that neither is nor has a tag is not found.
    public func tags(within name: String) throws(NotesError) -> [Tag] {
        let name = try Self.validTagName(name)
        let found = try read { txn, dbs in try projection.tags(in: txn, databases: dbs) }.filter { $0.isWithin(name) }
        guard !found.isEmpty else { throw .notFound(.tag(name: name)) }
        return found.sorted { $0.id < $1.id }
    }

    /// The notes (any status) that carry a tag of each of `groups`: a note must have one tag of
    /// every group (a group is a tag and the tags below it).
    public func notes(taggedWithAll groups: [[Identifier]]) throws(NotesError) -> Set<Identifier> {
        try read { txn, dbs in
            var result: Set<Identifier>?
            for group in groups {
                let ids = try projection.notes(
                    taggedWithAnyOf: group, statuses: [.active, .archived, .trashed], in: txn, databases: dbs)
                result = result.map { $0.intersection(ids) } ?? ids
            }
            return result ?? []
        }
    }

    /// The name of a tag id (also of a deleted tag), or nil.
    public func tagName(_ id: Identifier) throws(NotesError) -> String? {
        try read { txn, dbs in try projection.tag(id, in: txn, databases: dbs)?.name }
    }

    /// The names of categories and tags by id (deleted ones too), read in one transaction: a
    /// listing names a few dozen, and a transaction for each cost more than the page. Ids of no
    /// category or tag are left out.
    public func names(categories: [Identifier], tags: [Identifier]) throws(NotesError) -> (
        categories: [Identifier: String], tags: [Identifier: String]
    ) {
        try read { txn, dbs in
            var c: [Identifier: String] = [:]
            for id in categories {
                if let name = try projection.category(id, in: txn, databases: dbs)?.name { c[id] = name }
            }
            var t: [Identifier: String] = [:]
            for id in tags {
                if let name = try projection.tag(id, in: txn, databases: dbs)?.name { t[id] = name }
            }
            return (c, t)
        }
    }

    /// Renames the tag `old` and every tag below it (`work` to `job` makes `work/acme`
    /// `job/acme`); `old` may be a parent that no tag is named after. A name the rename would
    /// give that another tag has is refused, and nothing changes. Returns the renamed tags.
    @discardableResult
    public func renameTag(_ old: String, to new: String) throws(NotesError) -> [Tag] {
        let old = try Self.validTagName(old)
        let new = try Self.validTagName(new)
        return try write { session, dbs in
            let all = try projection.tags(in: session.transaction, databases: dbs)
            let moving = all.filter { $0.isWithin(old) }
            guard !moving.isEmpty else { throw NotesError.notFound(.tag(name: old)) }
            let renamed = moving.map { t in (t, new + t.name.dropFirst(old.count)) }
            let staying = Set(all.filter { !$0.isWithin(old) }.map { $0.name.lowercased() })
            var taken: Set<String> = []
            for (_, name) in renamed {
                let key = name.lowercased()
                guard !staying.contains(key), taken.insert(key).inserted else {
                    throw NotesError.validation(.tagExists(name: name))
                }
            }
            var meta = metadata
            if renamed.count > 1 { meta.correlationID = session.newID() }
            var out: [Tag] = []
            // The name index is rewritten once, after every rename (see `tagNamesDeferred`).
            projection.tagNamesDeferred.withLock { $0 = true }
            defer { projection.tagNamesDeferred.withLock { $0 = false } }
            for (tag, name) in renamed where tag.name != name {
                try session.append(
                    [TagEvent.renamed(name: name).newEvent(id: session.newID(), metadata: meta)], to: tag.stream,
                    expecting: .streamExists)
                if let t = try projection.tag(tag.id, in: session.transaction, databases: dbs) { out.append(t) }
            }
            try projection.rewriteTagNames(in: session.transaction, databases: dbs)
            return out.sorted { $0.name.lowercased() < $1.name.lowercased() }
        }
    }

    /// Deletes the tag `name` and every tag below it. Their notes are untagged by a
    /// `NoteUntagged` event each, in the same transaction, so every note's stream tells its
    /// whole story.
    @discardableResult
    public func deleteTag(_ name: String) throws(NotesError) -> TagDeletion {
        let name = try Self.validTagName(name)
        return try write { session, dbs in
            let doomed = try projection.tags(in: session.transaction, databases: dbs).filter { $0.isWithin(name) }
                .sorted { $0.id < $1.id }
            guard !doomed.isEmpty else { throw NotesError.notFound(.tag(name: name)) }
            let ids = Set(doomed.map(\.id))
            // Every note carrying one of them, whatever its status, each once: their ids from the
            // listing keys, then each note read once (a listing per tag read a note with all of
            // them once a tag, quadratic in a subtree of thousands; before trial-s31).
            var members: [Identifier: Note] = [:]
            let memberIDs = try projection.notes(
                taggedWithAnyOf: doomed.map(\.id), statuses: [.active, .archived, .trashed], in: session.transaction,
                databases: dbs)
            for id in memberIDs {
                if let n = try projection.note(id, in: session.transaction, databases: dbs) { members[id] = n }
            }
            var meta = metadata
            meta.correlationID = session.newID()
            let deletions = doomed.map { ($0, TagEvent.deleted.newEvent(id: session.newID(), metadata: meta)) }
            let cause = Dictionary(uniqueKeysWithValues: deletions.map { ($0.0.id, $0.1.id) })
            for n in members.values.sorted(by: { $0.id < $1.id }) {
                let events = n.tags.filter(ids.contains).map { t in
                    var m = meta
                    m.causationID = cause[t]
                    return NoteEvent.untagged(tag: t).newEvent(id: session.newID(), metadata: m)
                }
                try session.append(events, to: n.stream, expecting: .exact(n.version))
            }
            projection.tagNamesDeferred.withLock { $0 = true }
            defer { projection.tagNamesDeferred.withLock { $0 = false } }
            for (tag, event) in deletions { try session.append([event], to: tag.stream, expecting: .streamExists) }
            try projection.rewriteTagNames(in: session.transaction, databases: dbs)
            return TagDeletion(
                tags: doomed.map(\.name).sorted { $0.lowercased() < $1.lowercased() }, notes: members.count)
        }
    }

    /// The tag named `name`, created when none has the name, with the command's correlation id
    /// (see ``ensureCategory(_:id:session:dbs:command:)``).
    package func ensureTag(
        _ name: String, id chosen: Identifier? = nil, session: borrowing WriteSession, dbs: ProjectionDatabases,
        command: inout Identifier?
    ) throws -> Identifier {
        if let t = try projection.tag(named: name, in: session.transaction, databases: dbs) { return t.id }
        let id = chosen ?? session.newID()
        var meta = metadata
        if command == nil { command = session.newID() }
        meta.correlationID = command
        try session.append(
            [TagEvent.created(name: name).newEvent(id: session.newID(), metadata: meta)], to: Tag.stream(id),
            expecting: .noStream)
        return id
    }
}

/// The tag tree of a set of tags: one rule for the projection and for a past state.
public enum TagTree {
    /// Every tag and every parent the tags nest under, in tree order (parents first, names
    /// compared without regard to case). `members` gives the notes (not in the trash) a tag
    /// carries.
    public static func summaries(_ tags: [Tag], members: (Identifier) -> Set<Identifier>) -> [TagSummary] {
        struct Node {
            var name: String
            var count = 0
            var notes: Set<Identifier> = []
            var id: Identifier?
        }
        var nodes: [String: Node] = [:]
        // Tags in creation order, so that a parent shared by tags written in different cases
        // takes the first one's spelling.
        for t in tags.sorted(by: { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }) {
            let notes = members(t.id)
            let parts = t.name.split(separator: "/", omittingEmptySubsequences: false)
            for depth in 1...parts.count {
                let name = parts.prefix(depth).joined(separator: "/")
                let key = name.lowercased()
                var node = nodes[key] ?? Node(name: name)
                node.notes.formUnion(notes)
                if depth == parts.count, node.id == nil {
                    node.id = t.id
                    node.name = t.name
                    node.count = notes.count
                }
                nodes[key] = node
            }
        }
        return nodes.sorted { a, b in
            // Compare part by part so that `a/b` sorts right after `a`, before `a b`.
            let x = a.key.split(separator: "/", omittingEmptySubsequences: false)
            let y = b.key.split(separator: "/", omittingEmptySubsequences: false)
            return x.lexicographicallyPrecedes(y)
        }.map { TagSummary(name: $0.value.name, count: $0.value.count, total: $0.value.notes.count, id: $0.value.id) }
    }
}

/// The names a note's category and tags go by: now, or at a past moment.
public struct NoteLabels: Sendable, Equatable {
    public var category: String?
    /// Sorted without regard to case.
    public var tags: [String]

    public init(category: String?, tags: [String]) {
        self.category = category
        self.tags = tags.sorted { $0.lowercased() < $1.lowercased() }
    }
}

extension Notebook {
    /// The names of the note's category and tags as they were at log `position` (a note of a
    /// past version is best named as things were called then).
    public func labels(of note: Note, at position: UInt64) throws(NotesError) -> NoteLabels {
        try readLog { txn, _ in
            let names = NameBook(store: store)
            return NoteLabels(
                category: try note.category.map { try names.categories.ref($0, at: position, in: txn).name },
                tags: try note.tags.map { try names.tags.ref($0, at: position, in: txn).name })
        }
    }
}

extension NotebookState {
    /// The names of the note's category and tags in this state.
    public func labels(of note: Note) -> NoteLabels {
        labels(category: note.category, tags: note.tags)
    }

    /// The names of the row's category and tags in this state.
    public func labels(of row: NoteRow) -> NoteLabels {
        labels(category: row.category, tags: row.tags)
    }

    private func labels(category: Identifier?, tags ids: [Identifier]) -> NoteLabels {
        NoteLabels(
            category: category.map { categories[$0]?.name ?? shortID($0) },
            tags: ids.map { tags[$0]?.name ?? shortID($0) })
    }
}
