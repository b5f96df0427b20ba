import Basics
import Glibc

extension Notebook {
    /// Refuses an export file that would replace the store itself: `data.mdb` or `lock.mdb` in
    /// the store's own directory, however the path is spelled (symbolic links, `.`, `..`). An
    /// export is renamed into place, which replaces the directory entry it names: any other
    /// name, a link to those files included, leaves the store as it is.
    package func refuseOutputInStore(_ path: String) throws(NotesError) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard name == "data.mdb" || name == "lock.mdb" else { return }
        let storePath = store.environment.path
        guard let storeDir = Self.resolved(storePath), let target = Self.resolved(AtomicFile.directory(of: path)),
            target == storeDir
        else { return }
        throw .validation(.overwritesStore(path, store: storePath))
    }

    /// `path` with every symbolic link, `.` and `..` resolved, or nil when it does not exist.
    private static func resolved(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }
}
