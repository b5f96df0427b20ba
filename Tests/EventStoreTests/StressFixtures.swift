import EventStore
import LMDB
import StressFixture

/// The contents of the active projection slot: database name -> key -> value.
func projectionContents(_ store: EventStore) throws -> [String: [String: UInt64]] {
    try store.read { txn in
        let slot = try store.activeProjections(in: txn)
        var out: [String: [String: UInt64]] = [:]
        for name in ["by_type", "by_stream"] {
            var table: [String: UInt64] = [:]
            try txn.withCursor(slot[name]) { c in
                var entry = try c.first()
                while let e = entry {
                    table[String(decoding: e.key, as: UTF8.self)] = bigEndian(Array(e.value))
                    entry = try c.next()
                }
            }
            out[name] = table
        }
        return out
    }
}

/// What the counting projections must hold for a verified log.
func expectedProjections(_ log: VerifiedLog) -> [String: [String: UInt64]] {
    // The fixture's stream names are ASCII: as strings, as the projection keys them.
    let byStream = Dictionary(log.streamVersions.map { ($0.key.string, $0.value) }, uniquingKeysWith: max)
    return ["by_type": log.countsByType, "by_stream": byStream]
}
