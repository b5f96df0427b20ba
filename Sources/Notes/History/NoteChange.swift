public import Basics
import EventStore
public import TextDiff

/// A category or a tag as history shows it: its id and its name at the moment in question (a
/// deleted one keeps the last name it had).
public struct EntityRef: Sendable, Hashable {
    public var id: Identifier
    public var name: String

    public init(id: Identifier, name: String) {
        self.id = id
        self.name = name
    }
}

/// A category as history shows it.
public typealias CategoryRef = EntityRef
/// A tag as history shows it.
public typealias TagRef = EntityRef

/// One field of a note that differs between two states of it.
///
/// ```swift
/// NoteChange.title(from: "A", to: "B").summary  // "title \"A\" -> \"B\""
/// ```
public enum NoteChange: Sendable, Equatable {
    /// `from` is nil when the note is created.
    case title(from: String?, to: String)
    case body(DiffStat)
    case category(from: CategoryRef?, to: CategoryRef?)
    /// Tags added and removed, each sorted by name.
    case tags(added: [TagRef], removed: [TagRef])
    case pinned(from: Bool, to: Bool)
    case archived(from: Bool, to: Bool)
    case trashed(from: Bool, to: Bool)
    /// A property (see ``NoteProperty``) set, changed or removed (nil).
    case property(key: String, from: String?, to: String?)

    /// The field's name, as `--json` output names it.
    public var field: String {
        switch self {
        case .title: return "title"
        case .body: return "body"
        case .category: return "category"
        case .tags: return "tags"
        case .pinned: return "pinned"
        case .archived: return "archived"
        case .trashed: return "trashed"
        case .property(let key, _, _): return key
        }
    }

    /// Short text for history and log lines: `title "A" -> "B"`, `body +12 -3 lines`,
    /// `category none -> Work`, `tags +work/acme -home`, `pinned`, `untrashed`...
    public var summary: String {
        switch self {
        case .title(let from, let to):
            return "title " + (from.map { quoted($0) + " -> " } ?? "") + quoted(to)
        case .body(let stat):
            return "body +\(stat.added) -\(stat.removed) lines"
        case .category(let from, let to):
            return "category \(from?.name ?? "none") -> \(to?.name ?? "none")"
        case .tags(let added, let removed):
            return "tags " + NoteChange.tagList(added: added, removed: removed)
        case .pinned(_, let to): return to ? "pinned" : "unpinned"
        case .archived(_, let to): return to ? "archived" : "unarchived"
        case .trashed(_, let to): return to ? "trashed" : "untrashed"
        case .property(let key, let from, let to):
            let name = key == NoteProperty.frontMatter.rawValue ? "front matter" : key
            return name + " " + NoteChange.propertyChange(key: key, from: from, to: to)
        }
    }

    /// What a property change reads as after the property's name: `"A, B" -> "C"` (a list
    /// property's lines joined), `+2 -0 lines` for the front matter, `source-tags` by the names
    /// it lists, `none` for a removal.
    public static func propertyChange(key: String, from: String?, to: String?) -> String {
        if key == NoteProperty.frontMatter.rawValue {
            let stat = LineDiff.stat(from: from ?? "", to: to ?? "")
            return "+\(stat.added) -\(stat.removed) lines"
        }
        func text(_ value: String?) -> String {
            guard var lines = value.map(NoteProperty.lines) else { return "none" }
            // The tags a file named: by their names, not their tags' ids (`"x, work/a"`, or
            // `"none"`); a line of an id alone, as recorded at first, stays as it is.
            if key == NoteProperty.sourceTags.rawValue {
                lines = lines.map { line in
                    line.firstIndex(of: " ").map { String(line[line.index(after: $0)...]) } ?? line
                }
            }
            return quoted(lines.joined(separator: ", "))
        }
        return (from == nil ? "" : text(from) + " -> ") + text(to)
    }

    /// `+a +b -c`: the added tags, then the removed ones.
    public static func tagList(added: [TagRef], removed: [TagRef]) -> String {
        (added.map { "+" + $0.name } + removed.map { "-" + $0.name }).joined(separator: " ")
    }

    /// The fields that differ from `old` to `new`, in a fixed order (title, body, category,
    /// tags, pinned, archived, trashed, then the properties by key). With `old` nil (a creation), the fields the new note
    /// sets. `category` and `tag` name an id as it was called then.
    public static func between(
        _ old: Note?, _ new: Note, includeBody: Bool = true, category: (Identifier) throws -> CategoryRef,
        tag: (Identifier) throws -> TagRef
    ) rethrows -> [NoteChange] {
        var out: [NoteChange] = []
        let before =
            old ?? Note(id: new.id, title: "", body: "", createdAt: new.createdAt, updatedAt: new.createdAt, version: 0)
        if old == nil || !before.title.isSameBytes(as: new.title) {
            out.append(.title(from: old?.title, to: new.title))
        }
        if includeBody && !before.body.isSameBytes(as: new.body) {
            out.append(.body(LineDiff.stat(from: before.body, to: new.body)))
        }
        if before.category != new.category {
            out.append(.category(from: try before.category.map(category), to: try new.category.map(category)))
        }
        if before.tags != new.tags {
            let byName: (TagRef, TagRef) -> Bool = { ($0.name.lowercased(), $0.id) < ($1.name.lowercased(), $1.id) }
            let (added, removed) = Self.difference(from: before.tags, to: new.tags)
            out.append(
                .tags(added: try added.map(tag).sorted(by: byName), removed: try removed.map(tag).sorted(by: byName)))
        }
        if before.pinned != new.pinned { out.append(.pinned(from: before.pinned, to: new.pinned)) }
        if before.archived != new.archived { out.append(.archived(from: before.archived, to: new.archived)) }
        if before.trashed != new.trashed { out.append(.trashed(from: before.trashed, to: new.trashed)) }
        for key in Set(before.properties.keys).union(new.properties.keys).sorted()
        where before.properties[key] != new.properties[key] {
            out.append(.property(key: key, from: before.properties[key], to: new.properties[key]))
        }
        return out
    }
}

extension NoteChange {
    /// The ids of `new` not in `old`, and those of `old` not in `new` (each holding an id once),
    /// in their arrays' order. A note's history compares each version's tags with the one
    /// before, which mostly differ by one tag: the common head and tail are skipped, and only
    /// what is left between them is compared (through sets when it is long), so `history` of a
    /// note with thousands of tags is not cubic (it searched both whole arrays for every tag).
    package static func difference(from old: [Identifier], to new: [Identifier]) -> (
        added: [Identifier], removed: [Identifier]
    ) {
        var head = 0
        while head < old.count, head < new.count, old[head] == new[head] { head += 1 }
        var (oldEnd, newEnd) = (old.count, new.count)
        while oldEnd > head, newEnd > head, old[oldEnd - 1] == new[newEnd - 1] {
            oldEnd -= 1
            newEnd -= 1
        }
        let (was, now) = (old[head..<oldEnd], new[head..<newEnd])
        if was.count * now.count <= 256 {
            return (now.filter { !was.contains($0) }, was.filter { !now.contains($0) })
        }
        let (wasSet, nowSet) = (Set(was), Set(now))
        return (now.filter { !wasSet.contains($0) }, was.filter { !nowSet.contains($0) })
    }
}

/// A title in double quotes, cut to 60 characters so one change stays one readable line.
func quoted(_ text: String) -> String {
    let limit = 60
    var flat = String(text.map { $0.isNewline ? " " : $0 })
    if flat.count > limit { flat = String(flat.prefix(limit - 1)) + "…" }
    return "\"" + flat + "\""
}

/// One stored event of a note, with what it changed: a line of `notes history`.
public struct HistoryEntry: Sendable, Equatable {
    /// The stored event and the note after it.
    public var revision: NoteRevision
    /// What changed from the previous version (for a creation, what the note was created with).
    public var changes: [NoteChange]

    public init(revision: NoteRevision, changes: [NoteChange]) {
        self.revision = revision
        self.changes = changes
    }

    /// Whether the stored event created the note.
    public var isCreation: Bool {
        if case .created = revision.events.first { return true }
        return false
    }

    /// The version a `NoteRestored` event brought back, or nil.
    public var restoredFrom: UInt64? {
        for case .restored(let from, _, _, _, _) in revision.events { return from }
        return nil
    }

    /// The sync merge this event is, or nil: the version both sides started from, and whether
    /// both changed the same lines (a conflict, kept between markers).
    public var merge: (base: UInt64, conflicted: Bool)? {
        for event in revision.events {
            switch event {
            case .bodyMerged(let base, _): return (base, false)
            case .bodyConflicted(let base, _): return (base, true)
            default: continue
            }
        }
        return nil
    }

    /// `created "Title"`, `restored from v3: body +1 -2 lines`, `title "A" -> "B", body +12 -3 lines`,
    /// or `no change` for an event that changed nothing.
    public var summary: String {
        if isCreation {
            var s = "created"
            for c in changes {
                switch c {
                case .title(_, let to): s += " " + quoted(to)
                case .category(_, let to?): s += " in \(to.name)"
                case .tags(let added, _): s += ", tagged " + added.map(\.name).joined(separator: " ")
                case .pinned(_, true): s += ", pinned"
                default: break
                }
            }
            return s
        }
        let parts = changes.map(\.summary).joined(separator: ", ")
        if let from = restoredFrom {
            return "restored from v\(from)" + (parts.isEmpty ? " (no change)" : ": " + parts)
        }
        if let (base, conflicted) = merge {
            let what = conflicted ? "CONFLICT merging" : "merged"
            let last = revision.version - 1
            let theirs = last > base + 1 ? "v\(base + 1)-v\(last)" : "v\(last)"
            return "\(what) an edit of v\(base) with \(theirs)"
                + (parts.isEmpty ? " (no change)" : ": " + parts)
        }
        return parts.isEmpty ? "no change" : parts
    }
}

/// The two kinds of named entity: what the audit log calls them.
public enum EntityKind: String, Sendable {
    case category, tag
}

/// What a category or tag event did, for the audit log.
public enum EntityLogChange: Sendable, Equatable {
    case created(name: String)
    case renamed(from: String, to: String)
    case deleted(name: String)
    /// A sync merged it into the one named `into` (the same name, given on another device).
    case merged(name: String, into: String)

    /// `created tag "work"`, `category renamed "A" -> "B"`, `deleted tag "home"`,
    /// `category "Job" merged into "Work"`.
    public func summary(_ kind: EntityKind) -> String {
        switch self {
        case .created(let name): return "created \(kind.rawValue) " + quoted(name)
        case .renamed(let from, let to): return "\(kind.rawValue) renamed " + quoted(from) + " -> " + quoted(to)
        case .deleted(let name): return "deleted \(kind.rawValue) " + quoted(name)
        case .merged(let name, let into): return "\(kind.rawValue) " + quoted(name) + " merged into " + quoted(into)
        }
    }
}
