import Glibc
public import LMDB

/// An index built for one question and thrown away: `search --as-of` asks it of the notebook as
/// it was, which no stored index holds.
///
/// It is the stored index's own code (the bulk build on every core, the same searcher), in an
/// LMDB environment in the temporary folder whose files are removed as soon as it is open: the
/// system frees them when the process ends, killed or not, and nothing is left behind. Before
/// 2026-12-07 `search --as-of` built an ``InMemorySearchIndex``, whose dictionaries took 450 MB
/// and 5 s over 100,000 notes (1,000,000 events); this takes a fraction of both.
public enum ScratchSearchIndex {
    /// Calls `body` with a read transaction over the index of `documents`, whose words are
    /// stemmed in `language`. Throws when no index could be made in `temporaryFolder` (full,
    /// not writable).
    public static func with<R>(
        _ documents: [SearchDocument], language: SearchLanguage, temporaryFolder: String,
        _ body: (borrowing Transaction, SearchDatabases) throws -> R
    ) throws -> R {
        var template = Array((temporaryFolder + "/notes-search-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw LMDBError(code: .init(rawValue: errno), operation: "mkdtemp in \(temporaryFolder)")
        }
        let dir = String(cString: made)
        var options = Environment.Options()
        // Nothing here needs to outlive the process.
        options.noSync = true
        options.createDirectory = false
        // Room for the index at once (it takes less than the text it indexes), so that the
        // build seldom has to grow the map.
        let text = documents.reduce(0) { $0 &+ $1.title.utf8.count &+ $1.body.utf8.count }
        options.mapSize = (64 << 20) &+ 2 &* text
        let environment: Environment
        do {
            environment = try Environment(path: dir, options: options)
        } catch {
            removeScratch(dir)
            throw error
        }
        // Open, the files are no longer needed by name.
        removeScratch(dir)
        var databases = try SearchDatabases(environment: environment, prefix: "")
        databases.language = language
        try SearchIndex.bulkLoad(documents, into: databases, environment: environment)
        return try environment.read { txn in try body(txn, databases) }
    }

    /// Removes the environment's files and its folder.
    private static func removeScratch(_ dir: String) {
        unlink(dir + "/data.mdb")
        unlink(dir + "/lock.mdb")
        rmdir(dir)
    }
}
