public import Basics
import EventStore
import FoundationEssentials
import Glibc
public import Notes
import Synchronization
public import Testing

/// A clock the test moves by hand, in microseconds (starts at 2026-11-29T12:00:00Z).
public final class NotebookClock: Sendable {
    public static let start: Int64 = 1_795_953_600_000_000
    private let now = Mutex<Int64>(NotebookClock.start)

    public init() {}

    public func advance(seconds: Int64 = 1) { now.withLock { $0 += seconds * 1_000_000 } }
    public var micros: Int64 { now.withLock { $0 } }
    public var read: @Sendable () -> Int64 { { self.now.withLock { $0 } } }
}

/// Ids numbered 1, 2, 3... in hex digits 5-8 after a 4-digit stem (so `shortID` shows the
/// stem and the sequence number), shaped as version-4 UUIDs.
public final class NotebookIDs: IdentifierGenerator {
    private let counter = Mutex<UInt64>(0)
    /// The leading 16 bits of every id: two generators with different stems never collide.
    public let stem: UInt64

    public init(stem: UInt64 = 0) { self.stem = stem }

    public func next() -> Identifier {
        let n = counter.withLock { v -> UInt64 in
            v += 1
            return v
        }
        return Identifier(high: (stem << 48) | ((n & 0xFFFF) << 32) | 0x4000, low: 0x8000_0000_0000_0000 | n)
    }
}

/// A notebook in a fresh temp directory with an injected clock and id generator.
public final class NotebookFixture {
    public let path: String
    public let clock = NotebookClock()
    public let ids: NotebookIDs
    public private(set) var book: Notebook
    public let options: Notebook.Options

    public init(stem: UInt64 = 0, maxBodyBytes: Int? = nil) throws {
        var template = Array("/tmp/notebook-tests.XXXXXX".utf8CString)
        let made: String? = template.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress, let result = mkdtemp(base) else { return nil }
            return String(cString: result)
        }
        path = try #require(made, "mkdtemp failed: errno \(errno)")
        ids = NotebookIDs(stem: stem)
        var o = Notebook.Options(actor: "ana@laptop", command: "notes test")
        o.clock = clock.read
        o.ids = ids
        if let maxBodyBytes { o.maxBodyBytes = maxBodyBytes }
        options = o
        book = try Notebook(path: path, options: o)
    }

    deinit { _ = try? FileManager.default.removeItem(atPath: path) }

    /// Closes and opens the store again (a new process would see the same).
    public func reopen() throws {
        book = try Notebook(path: path, options: options)
    }

    /// The position of the last event: unchanged after a command that must change nothing.
    public var head: UInt64 {
        get throws { try book.stats().events }
    }

    /// The current-schema events of a note's stream, oldest first.
    public func events(_ id: Identifier) throws -> [NoteEvent] {
        try book.revisions(of: id).flatMap(\.events)
    }
}

/// Runs `body`, expecting a `NotesError`; returns it for the caller to match.
public func notebookError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> NotesError? {
    do {
        try body()
        Issue.record("expected a NotesError, but the call succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let e as NotesError {
        return e
    } catch {
        Issue.record("expected a NotesError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

extension NotesError {
    public var isValidation: Bool {
        if case .validation = self { return true }
        return false
    }
    public var isNotFound: Bool {
        if case .notFound = self { return true }
        return false
    }
}
