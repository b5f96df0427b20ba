import EventStore
import LMDB

// BRING-UP: forwards to the search index once Sources/Notes/Search lands.
enum SearchBridge {
    static let version = "none"
    static let databaseSpecs: [(name: String, flags: DatabaseFlags)] = []
    static func update(old: Note?, new: Note, in txn: borrowing Transaction, databases: ProjectionDatabases) throws {}
    static func bulkLoad(_ notes: [Note], context: RebuildContext, databases: ProjectionDatabases) throws {}
}

extension SearchBridge {
    static func compare(with state: NotebookState, in txn: borrowing Transaction, databases: ProjectionDatabases) throws
        -> [String]
    { [] }
}
