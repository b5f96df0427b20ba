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
        guard let storeDir = resolvedPath(storePath), let target = resolvedPath(AtomicFile.directory(of: path)),
            target == storeDir
        else { return }
        throw .validation(.overwritesStore(path, store: storePath))
    }

    /// Refuses to write through file descriptor `fd` (given as `path`) when it is the store's
    /// `data.mdb` or `lock.mdb`, by device and inode: written in place, not renamed, so a hard
    /// link or a shell's `1<>data.mdb` is the store as much as its own name.
    package func refuseDescriptorInStore(_ fd: Int32, named path: String) throws(NotesError) {
        let storePath = store.environment.path
        var open = stat()
        var file = stat()
        guard fstat(fd, &open) == 0 else { return }
        for name in ["data.mdb", "lock.mdb"]
        where stat(storePath + "/" + name, &file) == 0 && open.st_dev == file.st_dev && open.st_ino == file.st_ino {
            throw .validation(.overwritesStore(path, store: storePath))
        }
    }

}
