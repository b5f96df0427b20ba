import Basics
import Glibc

extension Notebook {
    /// Refuses an output that would be written straight into the store's own directory: `path`
    /// is the folder of a Markdown export (`isDirectory`) or an export file, whose folder is
    /// judged. A file there could replace `data.mdb` or `lock.mdb`, the store itself. Paths are
    /// compared resolved (symbolic links, `.`, `..`); a folder below the store's cannot hold
    /// its files and is left alone, as is one that does not exist.
    package func refuseOutputInStore(_ path: String, isDirectory: Bool) throws(NotesError) {
        let storePath = store.environment.path
        guard let storeDir = Self.resolved(storePath),
            let target = Self.resolved(isDirectory ? path : AtomicFile.directory(of: path)), target == storeDir
        else { return }
        throw .validation(.insideStore(path, store: storePath))
    }

    /// `path` with every symbolic link, `.` and `..` resolved, or nil when it does not exist.
    private static func resolved(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }
}
