// The fixture shared by the notes-stress child and the event-store tests: the parent must open
// the child's store with the same registry and projections.

public import EventStore
public import LMDB

// MARK: The fixture: two event types and a projection that counts them

/// Payload fields of the stress events: a counter and a short text.
public let stressTypes = ["Tick", "Tock"]

public func stressRegistry() -> SchemaRegistry {
    var registry = SchemaRegistry()
    for type in stressTypes {
        registry.registerCurrent(
            PayloadSchema(type: type, version: 1, fields: [.init("n", .integer), .init("text", .string)]))
    }
    return registry
}

/// Counts events per type (`by_type`) and records each stream's last version (`by_stream`).
public final class CountingProjections: ProjectionSet {
    public let version: String
    public init(version: String = "counting-1") { self.version = version }

    public var databaseSpecs: [(name: String, flags: DatabaseFlags)] { [("by_type", []), ("by_stream", [])] }

    public func apply(_ events: [LiftedEvent], in txn: borrowing Transaction, databases: ProjectionDatabases) throws {
        for e in events {
            let typeKey = Array(e.type.utf8)
            let count = try txn.get(databases["by_type"], key: typeKey).map(bigEndian) ?? 0
            try txn.put(databases["by_type"], key: typeKey, value: bytes(count + 1))
            try txn.put(databases["by_stream"], key: Array(e.stream.utf8), value: bytes(e.version))
        }
    }

    public func rebuild(context: RebuildContext, head: UInt64, into databases: ProjectionDatabases) throws {
        var counts: [String: UInt64] = [:]
        var streams: [String: UInt64] = [:]
        let store = context.store
        try store.read { txn in
            try store.forEachEvent(from: 1, in: txn) { view in
                guard view.position <= head else { return false }
                for lifted in try store.lift(view) { counts[lifted.type, default: 0] += 1 }
                streams[view.stream] = view.version
                if view.position % 1000 == 0 { context.progress(view.position, of: head) }
                return true
            }
        }
        // Several small transactions, so a kill can land in the middle of a rebuild.
        let entries = counts.map { ("by_type", $0.key, $0.value) } + streams.map { ("by_stream", $0.key, $0.value) }
        var start = 0
        while start < entries.count {
            let chunk = entries[start..<min(start + 64, entries.count)]
            try context.write { txn in
                for (db, key, value) in chunk { try txn.put(databases[db], key: Array(key.utf8), value: bytes(value)) }
            }
            start += 64
        }
    }
}

public func bytes(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
public func bigEndian(_ b: [UInt8]) -> UInt64 { b.reduce(0) { $0 << 8 | UInt64($1) } }
