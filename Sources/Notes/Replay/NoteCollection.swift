public import Basics
import EventStore

/// Notes by id: the notes of a ``NotebookState``.
///
/// The notes sit in an array, found through a compact open-addressing index, so a replay that
/// has folded them into an array hands them over as they are: building a dictionary of a
/// large notebook would hash and move every note again, one at a time, after the scans.
public struct NoteCollection: Sendable, Equatable {
    /// Every note, in no particular order.
    public private(set) var values: [Note] = []
    private var table = NoteTable()

    public init() {}

    /// The notes given, whose ids must be distinct.
    public init(_ notes: consuming [Note]) {
        var table = NoteTable(capacity: notes.count)
        // Through the buffer: reading an id must not copy its note (and retain its strings).
        notes.withUnsafeBufferPointer { buffer in
            for i in buffer.indices {
                let id = buffer[i].id
                precondition(table.find(id, idAt: { buffer[$0].id }) == nil, "note \(id) is twice in a collection")
                table.insert(id, index: i)
            }
        }
        self.values = notes
        self.table = table
    }

    public var count: Int { values.count }
    public var isEmpty: Bool { values.isEmpty }

    /// The note with `id`, or nil.
    public subscript(id: Identifier) -> Note? {
        guard let i = find(id) else { return nil }
        return values[i]
    }

    /// Adds `note`, or replaces the note with its id.
    public mutating func update(_ note: Note) {
        update(note.id, existing: { $0 = note }, absent: { (note, ()) })
    }

    /// Changes the note with `id` where it lies, or, when there is none, adds the note `absent`
    /// gives (if any): a note taken out and put back has each of its strings retained and
    /// released.
    mutating func update<R, E: Error>(
        _ id: Identifier, existing: (inout Note) throws(E) -> R, absent: () throws(E) -> (Note?, R)
    ) throws(E) -> R {
        if let i = find(id) { return try existing(&values[i]) }
        let (note, r) = try absent()
        if let note {
            table.insert(note.id, index: values.count)
            values.append(note)
        }
        return r
    }

    /// Changes the note with `id` in place, if there is one.
    public mutating func modify(_ id: Identifier, _ change: (inout Note) -> Void) {
        guard let i = find(id) else { return }
        change(&values[i])
    }

    /// Every note, in id order, leaving the collection empty: sorted where they lie, so a
    /// collection that is the only owner of its notes hands them over without a copy.
    public mutating func takeSortedByID() -> [Note] {
        var notes: [Note] = []
        swap(&notes, &values)
        table = NoteTable()
        notes.sort { $0.id < $1.id }
        return notes
    }

    /// Whether both hold the same notes, in any order.
    public static func == (a: NoteCollection, b: NoteCollection) -> Bool {
        a.count == b.count && a.values.allSatisfy { b[$0.id] == $0 }
    }

    private func find(_ id: Identifier) -> Int? {
        values.withUnsafeBufferPointer { buffer in table.find(id) { buffer[$0].id } }
    }
}
