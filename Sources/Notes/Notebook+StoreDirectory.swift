import Basics

extension Notebook {
    /// Refuses an export file that would replace the store itself: `data.mdb` or `lock.mdb` in
    /// the store's own directory, however the path is spelled (symbolic links, `.`, `..`). An
    /// export is renamed into place, which replaces the directory entry it names: any other
    /// name, a link to those files included, leaves the store as it is.
    package func refuseOutputInStore(_ path: String) throws(NotesError) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard name == "data.mdb" || name == "lock.mdb" else { return }
        let storePath = store.environment.path
        guard let storeDir = resolvedPath(storePath), let target = resolvedPath(AtomicFile.directory(of: path)),
            target == storeDir
        else { return }
        throw .validation(.overwritesStore(path, store: storePath))
    }

}
