public import Basics

/// What the search engine indexes: a document with a title and a body, and the few fields its
/// filters and its tie-breaks read. It knows nothing else of what it indexes (the notes
/// projection makes one of each note).
///
/// ```swift
/// let doc = SearchDocument(id: id, title: "Groceries", body: "- milk\n", updatedAt: now)
/// ```
public struct SearchDocument: Sendable, Equatable {
    /// Where a document is shown: the three places a filter can look.
    public enum Status: UInt8, Sendable, CaseIterable {
        case active = 0
        case archived = 1
        case trashed = 2
    }

    public var id: Identifier
    /// One line or several (a note's other names): a phrase spans no two lines.
    public var title: String
    public var body: String
    /// The one group a document may be in (a filter can ask for it, or for none).
    public var category: Identifier?
    /// Microseconds; the later of two equal scores ranks first.
    public var updatedAt: Int64
    public var pinned: Bool
    public var status: Status

    public init(
        id: Identifier, title: String, body: String, category: Identifier? = nil, updatedAt: Int64,
        pinned: Bool = false, status: Status = .active
    ) {
        self.id = id
        self.title = title
        self.body = body
        self.category = category
        self.updatedAt = updatedAt
        self.pinned = pinned
        self.status = status
    }
}
