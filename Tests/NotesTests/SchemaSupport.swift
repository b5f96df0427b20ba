import Basics
import EventStore
import Foundation
import Glibc
import Notes
import Synchronization
import Testing

/// A temporary directory for one test, removed when the value goes away.
final class SchemaScratch: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/notes-schema-tests.XXXXXX".utf8CString)
        let made: String? = template.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress, let result = mkdtemp(base) else { return nil }
            return String(cString: result)
        }
        path = try #require(made, "mkdtemp failed: errno \(errno)")
    }

    deinit { _ = try? FileManager.default.removeItem(atPath: path) }

    func sub(_ name: String) -> String { path + "/" + name }
}

/// A clock the test sets: every reading returns the set instant, then moves it on by `step`
/// (one second unless told), so the events of one command still get increasing times.
final class SchemaClock: Sendable {
    private let now: Mutex<Int64>
    private let step: Int64

    init(_ rfc3339: String, step: Int64 = 1_000_000) {
        now = Mutex(RFC3339.parse(rfc3339) ?? 0)
        self.step = step
    }

    func set(micros: Int64) { now.withLock { $0 = micros } }

    func set(_ rfc3339: String) {
        let t = RFC3339.parse(rfc3339) ?? 0
        now.withLock { $0 = t }
    }

    var function: @Sendable () -> Int64 {
        { [self] in
            now.withLock { t in
                defer { t += step }
                return t
            }
        }
    }
}

/// Ids `<prefix>-0000-4000-8000-<counter>`: deterministic and easy to recognise in a dump.
final class SchemaIDs: IdentifierGenerator {
    private let prefix: UInt64
    private let counter = Mutex<UInt64>(0)

    init(prefix: UInt32) { self.prefix = UInt64(prefix) << 32 | 0x4000 }

    func next() -> Identifier {
        let n = counter.withLock { c -> UInt64 in
            c += 1
            return c
        }
        return Identifier(high: prefix, low: 0x8000_0000_0000_0000 | n)
    }
}

/// Where the committed fixtures live: `Tests/Fixtures`, found from this file's path.
enum SchemaFixtures {
    static var directory: String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)
        return parts.joined(separator: "/") + "/Fixtures"
    }

    static var legacyStore: String { directory + "/legacy-v1" }
    static var legacyExport: String { directory + "/legacy-v1.jsonl" }

    /// Copies the committed legacy store into `dir` (opening a store writes its lock file and
    /// may rebuild projections, and the committed bytes must never change).
    static func copyLegacyStore(to dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: legacyStore + "/data.mdb", toPath: dir + "/data.mdb")
    }
}

func schemaOptions(clock: SchemaClock? = nil, ids: (any IdentifierGenerator)? = nil, readOnly: Bool = false)
    -> Notebook.Options
{
    var o = Notebook.Options(actor: "tester@test", command: "schema tests")
    o.readOnly = readOnly
    if let clock {
        o.clock = clock.function
    } else {
        o.clock = { 1_700_000_000_000_000 }
    }
    if let ids { o.ids = ids }
    return o
}

/// Encodes fields with the registry's schema for (type, version); the test fails on a mismatch.
func schemaPayload(_ type: String, _ version: UInt32, _ fields: [(String, FieldValue)]) throws -> [UInt8] {
    guard let schema = NotesSchema.registry.schemas[SchemaKey(type, version)] else {
        throw SchemaTestError("no schema \(type) v\(version)")
    }
    let encoded: [UInt8] = try schema.encode(EventFields(fields))
    return encoded
}

/// The bytes of a file, or nil when it cannot be read.
func schemaFileBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { Array($0) }
}

struct SchemaTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
