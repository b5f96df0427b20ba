import LMDB

/// One problem `verify` found.
public struct VerificationProblem: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case checksum, chain, gap, streamIndex, version, eventIndex, catalogue, projection, undecodable
        /// The database file's own pages: a page two trees share, or a free-list entry naming a
        /// page in use (see `Environment.auditPages(in:)`); the next write could destroy data.
        case pages
    }
    public let kind: Kind
    /// The log position concerned, if any.
    public let position: UInt64?
    public let detail: String

    public init(_ kind: Kind, position: UInt64?, _ detail: String) {
        self.kind = kind
        self.position = position
        self.detail = detail
    }

    public var description: String {
        (position.map { "position \($0): " } ?? "") + "\(kind.rawValue): \(detail)"
    }
}

extension EventStore {
    /// Checks the log itself: each event's checksum, the hash chain, gap-free positions,
    /// contiguous stream versions, the stream and event-id indexes, and the schema catalogue;
    /// and the database file's pages (each used once, the free list naming none in use).
    ///
    /// It reads one snapshot and never stops at the first problem; at most `limit` are kept.
    public func verifyLog(limit: Int = 1000, progress: ((UInt64, UInt64) -> Void)? = nil) throws(StoreError)
        -> [VerificationProblem]
    {
        var problems: [VerificationProblem] = []
        func report(_ p: VerificationProblem) { if problems.count < limit { problems.append(p) } }
        do {
            try environment.read { txn in
                let head = try headPosition(in: txn)
                var expected: UInt64 = 1
                var previousDigest = [UInt8](repeating: 0, count: Envelope.digestSize)
                // By the name's bytes, as LMDB tells streams apart: `String` keys took canonically
                // equivalent names ("caf\u{E9}" and "cafe\u{301}", two streams) for one, and
                // reported the second's first event as a version jump (before 2026-12-07).
                var versions: [[UInt8]: UInt64] = [:]
                var counts: [SchemaKey: UInt64] = [:]
                var pages = MappedPageBudget(environment)
                try txn.withCursor(events) { c in
                    var entry = try c.first()
                    while let e = entry {
                        guard e.key.count == 8 else {
                            report(.init(.gap, position: nil, "an event key is \(e.key.count) bytes, not 8"))
                            entry = try c.next()
                            continue
                        }
                        let pos = UInt64(bigEndian: e.key.loadUnaligned(as: UInt64.self))
                        if pos != expected {
                            report(
                                .init(.gap, position: pos, "expected position \(expected); positions must be gap-free"))
                        }
                        expected = pos + 1
                        let view: EventView
                        do { view = try Envelope.view(e.value, position: pos) } catch {
                            let isChecksum = (error as? DecodingError)?.reason == .checksumMismatch
                            report(.init(isChecksum ? .checksum : .undecodable, position: pos, "\(error)"))
                            // The chain cannot be checked past a damaged event; resume from its stored digest.
                            if e.value.count >= 36 {
                                previousDigest = Array(e.value[(e.value.count - 36)..<(e.value.count - 4)])
                            }
                            entry = try c.next()
                            continue
                        }
                        let digest = Envelope.chainDigest(previous: previousDigest, body: view.body)
                        if !digest.elementsEqual(view.digest) {
                            report(
                                .init(
                                    .chain, position: pos,
                                    "digest does not cover the previous event; the log was altered"))
                        }
                        previousDigest = Array(view.digest)
                        let stream = view.stream
                        var sKey = Array(stream.utf8)
                        let last = versions[sKey] ?? 0
                        if view.version != last + 1 {
                            report(
                                .init(
                                    .version, position: pos, "\(stream) jumps from version \(last) to \(view.version)"))
                        }
                        versions[sKey] = view.version
                        counts[SchemaKey(view.type, view.schemaVersion), default: 0] += 1
                        sKey.append(0)
                        sKey.append(contentsOf: keyBytes(view.version))
                        if try txn.get(streams, key: sKey) != keyBytes(pos) {
                            report(
                                .init(
                                    .streamIndex, position: pos,
                                    "\(stream) v\(view.version) is not indexed at this position"))
                        }
                        if try txn.get(eventIDs, key: view.id.bytes) != keyBytes(pos) {
                            report(
                                .init(.eventIndex, position: pos, "event id \(view.id) is not indexed at this position")
                            )
                        }
                        if let progress, pos % 16_384 == 0 { progress(pos, head) }
                        // A verification reads the whole log once: its pages need not stay mapped.
                        pages.read(e.value.count)
                        entry = try c.next()
                    }
                }
                for (name, version) in versions {
                    let stored = try txn.get(streamHeads, key: name).map { try decodeUInt64($0) } ?? 0
                    if stored != version {
                        let stream = String(decoding: name, as: UTF8.self)
                        report(
                            .init(
                                .streamIndex, position: nil, "\(stream) head says v\(stored), the log has v\(version)"))
                    }
                }
                for problem in environment.auditPages(in: txn, limit: 20) {
                    report(.init(.pages, position: nil, problem))
                }
                let catalogue = try catalogue(in: txn)
                for key in Set(catalogue.keys).union(counts.keys).sorted() where catalogue[key] != counts[key] {
                    report(
                        .init(
                            .catalogue, position: nil,
                            "\(key): catalogue says \(catalogue[key] ?? 0) events, the log holds \(counts[key] ?? 0)"))
                }
            }
        } catch { throw StoreError.wrap(error) }
        return problems
    }
}
