import Basics
import EventStore
import Glibc
import LMDB
public import Notes

/// What an export wrote.
public struct ExportSummary: Sendable, Equatable {
    /// Lines written.
    public var lines: Int
    /// Stored events read.
    public var events: Int
    /// The position of the last stored event exported (0 when none): pass it as `after` to
    /// continue with the events appended since.
    public var lastPosition: UInt64

    public init(lines: Int, events: Int, lastPosition: UInt64) {
        self.lines = lines
        self.events = events
        self.lastPosition = lastPosition
    }
}

extension Notebook {
    /// Writes the log in the interchange format (see ``EventLine``), oldest first, to `sink`
    /// in chunks of about `chunkBytes`.
    ///
    /// Reads one snapshot, so a concurrent writer neither blocks nor tears the export, and
    /// holds one chunk in memory whatever the size of the log.
    ///
    /// With `upcast`, each stored event is lifted to the current schema first. A legacy event
    /// may become several events (or none): the lines of one stored event keep its position;
    /// the first keeps its event id and the others get ids derived from it (so exporting twice
    /// gives the same file); versions are renumbered within each stream so that they stay
    /// consecutive and the file imports into an empty store.
    ///
    /// ```swift
    /// try book.exportEvents(after: 0) { chunk in try out.write(chunk) }
    /// ```
    @discardableResult
    public func exportEvents(
        after position: UInt64 = 0, upcast: Bool = false, chunkBytes: Int = 1 << 20,
        to sink: ([UInt8]) throws -> Void
    ) throws -> ExportSummary {
        var summary = ExportSummary(lines: 0, events: 0, lastPosition: 0)
        guard position < UInt64.max else { return summary }
        let registry = store.registry
        var buffer: [UInt8] = []
        buffer.reserveCapacity(chunkBytes + 4096)
        // Only streams whose lifted versions differ from the stored ones are remembered.
        var versionShift: [String: Int64] = [:]
        // Per such stream, each stored version after which the shift changed, and the shift from
        // then on: a restore's `fromVersion` (a merge's base) names a stored version, renumbered
        // as the version its state ends at (the last of the events it was lifted to).
        var shiftChanges: [String: [(version: UInt64, shift: Int64)]] = [:]
        func renumbered(_ from: UInt64, in stream: String) -> UInt64 {
            guard let changes = shiftChanges[stream] else { return from }
            var shift: Int64 = 0
            for change in changes {
                if change.version > from { break }
                shift = change.shift
            }
            return UInt64(clamping: Int64(clamping: from) &+ shift)
        }
        do {
            try store.environment.read { txn in
                try store.forEachEvent(from: position + 1, in: txn) { view in
                    summary.events += 1
                    summary.lastPosition = view.position
                    if upcast {
                        let stream = view.stream
                        let lifted = try store.lift(view)
                        let shift = versionShift[stream] ?? 0
                        for (i, e) in lifted.enumerated() {
                            guard let schema = registry.schemas[SchemaKey(e.type, e.schemaVersion)] else {
                                throw StoreError.damaged(position: view.position, detail: "no schema for \(e.type)")
                            }
                            var fields = try schema.decode(e.payload)
                            if case .integer(let from) = fields["fromVersion"], from > 0 {
                                fields["fromVersion"] = .integer(
                                    Int64(clamping: renumbered(UInt64(from), in: stream)))
                            }
                            let id = i == 0 ? view.id : Identifier.derived("upcast", view.id.uuidString, String(i))
                            let version = UInt64(clamping: Int64(clamping: view.version) &+ shift &+ Int64(i))
                            EventLine.write(
                                position: view.position, id: id, stream: stream, version: version, type: e.type,
                                schemaVersion: e.schemaVersion, recordedAt: view.recordedAt,
                                metadata: view.metadata, data: fields, to: &buffer)
                            summary.lines += 1
                        }
                        let newShift = shift &+ Int64(lifted.count) &- 1
                        versionShift[stream] = newShift == 0 ? nil : newShift
                        if newShift != shift { shiftChanges[stream, default: []].append((view.version, newShift)) }
                    } else {
                        let type = view.type
                        guard let schema = registry.schemas[SchemaKey(type, view.schemaVersion)] else {
                            throw StoreError.damaged(
                                position: view.position, detail: "no schema for \(type) v\(view.schemaVersion)")
                        }
                        let fields: EventFields
                        do { fields = try schema.decode(view.payload) } catch {
                            throw StoreError.damaged(position: view.position, detail: "payload: \(error)")
                        }
                        EventLine.write(
                            position: view.position, id: view.id, stream: view.stream, version: view.version,
                            type: type, schemaVersion: view.schemaVersion, recordedAt: view.recordedAt,
                            metadata: view.metadata, data: fields, to: &buffer)
                        summary.lines += 1
                    }
                    if buffer.count >= chunkBytes {
                        try sink(buffer)
                        buffer.removeAll(keepingCapacity: true)
                        // Constant memory includes the log's pages the scan has mapped.
                        store.environment.releaseMappedPages()
                    }
                    return true
                }
            }
        } catch let e as LMDBError {
            throw NotesError.store(.storage(e))
        } catch let e as StoreError {
            throw NotesError.store(e)
        }
        if !buffer.isEmpty { try sink(buffer) }
        return summary
    }

    /// Exports to a file: written under a temporary name and renamed into place when
    /// complete, so a failed export leaves any existing file untouched.
    @discardableResult
    public func exportEvents(toFile path: String, after position: UInt64 = 0, upcast: Bool = false) throws
        -> ExportSummary
    {
        try refuseOutputInStore(path)
        var path = path
        // A symbolic link (to a backup disk, a synced folder) is written where it leads, as the
        // config file is: before 2026-12-06 the export was renamed over the link itself.
        var st = stat()
        if lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFLNK {
            if let target = resolvedPath(path) {
                try refuseOutputInStore(target)
                path = target
            } else if !Self.isPipeOrDevice(path) {
                throw NotesError.io(
                    IOFailure(
                        .write, path, code: nil,
                        detail: "it is a symbolic link that leads nowhere; create the file it names, or remove the link"
                    ))
            }
            // Else a link the kernel makes to a pipe (`/dev/fd/3`, `>(gzip)`), which leads to
            // `pipe:[N]`, a name no path has: written in place below (before 2026-12-07 refused as
            // a link that leads nowhere).
        }
        let kind = stat(path, &st) == 0 ? st.st_mode & S_IFMT : S_IFREG
        if kind == S_IFDIR { throw NotesError.validation(.isDirectory(path)) }
        if kind != S_IFREG {
            // A device or a pipe (`/dev/null`, `/dev/stdout`, a FIFO) is written in place: a
            // file renamed over it would replace the device itself (as root, before 2026-12-06,
            // `--output /dev/full` left a plain file where the device had been).
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw NotesError.io(IOFailure(.write, path, code: errno)) }
            defer { close(fd) }
            return try exportEvents(toFileDescriptor: fd, after: position, upcast: upcast)
        }
        let file = try io { () throws(IOFailure) in try AtomicFile(path: path) }
        do {
            let summary = try exportEvents(after: position, upcast: upcast) { chunk in
                try io { () throws(IOFailure) in try file.write(chunk) }
            }
            try io { () throws(IOFailure) in try file.commit() }
            return summary
        } catch {
            file.discard()
            throw error
        }
    }

    /// Whether `path`, its links followed, is a pipe, a socket or a device.
    private static func isPipeOrDevice(_ path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0 else { return false }
        let kind = st.st_mode & S_IFMT
        return kind != S_IFREG && kind != S_IFDIR
    }

    /// Exports to an open file descriptor (standard output is 1).
    ///
    /// When the reader goes away (`notes export | head`), the export stops quietly: the
    /// summary then counts the lines written before.
    @discardableResult
    public func exportEvents(toFileDescriptor fd: Int32, after position: UInt64 = 0, upcast: Bool = false) throws
        -> ExportSummary
    {
        struct ReaderGone: Error {}
        var written = 0
        do {
            return try exportEvents(after: position, upcast: upcast) { chunk in
                let failure: Int32? = chunk.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count, let base = bytes.baseAddress {
                        let n = Glibc.write(fd, base + offset, bytes.count - offset)
                        if n < 0 {
                            if errno == EINTR { continue }
                            return errno
                        }
                        offset += n
                    }
                    return nil
                }
                if failure == EPIPE { throw ReaderGone() }
                if let failure {
                    let what = fd == 1 ? "standard output" : "the output"
                    throw NotesError.io(IOFailure(.write, what, code: failure))
                }
                written += chunk.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            }
        } catch is ReaderGone {
            return ExportSummary(lines: written, events: written, lastPosition: 0)
        }
    }
}
