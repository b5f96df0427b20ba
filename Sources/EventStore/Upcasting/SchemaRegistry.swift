/// An event at some schema version with its fields decoded: what upcasters read and return.
public struct RawEvent: Sendable, Equatable {
    public var type: String
    public var version: UInt32
    public var fields: EventFields

    public init(type: String, version: UInt32, fields: EventFields = EventFields()) {
        self.type = type
        self.version = version
        self.fields = fields
    }
}

/// One step of schema evolution: lifts events of (type, version) to the next shape.
///
/// An upcaster may rename the type, fill defaults, split one event into several (1 -> N) or
/// retire a type (return no events). It acts on raw fields, never on today's structs, and is
/// never edited once shipped: a later change is a new upcaster from the next version.
public struct Upcaster: Sendable {
    public let type: String
    public let fromVersion: UInt32
    /// A stable name recorded in the projection version, e.g. `NoteCreated.1->2`.
    public let name: String
    /// Every (type, version) the lift can produce; the open-time check follows these.
    public let produces: [SchemaKey]
    public let lift: @Sendable (RawEvent) throws -> [RawEvent]
    /// The plan the lift runs, when the upcaster was declared by one (see ``UpcastPlan``).
    public internal(set) var plan: UpcastPlan?

    public init(
        type: String, from version: UInt32, name: String, produces: [SchemaKey],
        lift: @escaping @Sendable (RawEvent) throws -> [RawEvent]
    ) {
        self.type = type
        self.fromVersion = version
        self.name = name
        self.produces = produces
        self.lift = lift
    }
}

/// A (type, schema version) pair.
public struct SchemaKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let type: String
    public let version: UInt32
    public init(_ type: String, _ version: UInt32) {
        self.type = type
        self.version = version
    }
    public var description: String { "\(type) v\(version)" }
    public static func < (a: SchemaKey, b: SchemaKey) -> Bool { (a.type, a.version) < (b.type, b.version) }
}

/// Why an event cannot be brought to the current schema.
public struct UpcastError: Error, Sendable, CustomStringConvertible {
    public let key: SchemaKey
    public let message: String
    public var description: String { "\(key): \(message)" }
}

/// Every payload schema the program knows (current and legacy) and the upcasters between them.
///
/// ```swift
/// var registry = SchemaRegistry()
/// registry.registerCurrent(PayloadSchema(type: "Retitled", version: 1, fields: [.init("title", .string)]))
/// registry.registerLegacy(PayloadSchema(type: "NoteUpdated", version: 1, fields: [...]))
/// registry.register(Upcaster(type: "NoteUpdated", from: 1, name: "NoteUpdated.1->split") { old in [...] })
/// ```
public struct SchemaRegistry: Sendable {
    public private(set) var schemas: [SchemaKey: PayloadSchema] = [:]
    /// The current schema version of each current type.
    public private(set) var current: [String: UInt32] = [:]
    public private(set) var upcasters: [SchemaKey: Upcaster] = [:]

    public init() {}

    /// An empty registry with room for `schemas` schemas (current and legacy) and `upcasters`
    /// upcasters: a program builds its registry at every start, and growing the tables step by
    /// step rehashes every key each time.
    public init(schemas: Int, upcasters: Int) {
        self.schemas = Dictionary(minimumCapacity: schemas)
        self.current = Dictionary(minimumCapacity: schemas)
        self.upcasters = Dictionary(minimumCapacity: upcasters)
    }

    /// Registers the current schema of a type.
    public mutating func registerCurrent(_ schema: PayloadSchema) {
        schemas[SchemaKey(schema.type, schema.version)] = schema
        current[schema.type] = schema.version
    }

    /// Registers an old schema, kept so old events can be decoded and upcast.
    public mutating func registerLegacy(_ schema: PayloadSchema) {
        schemas[SchemaKey(schema.type, schema.version)] = schema
    }

    /// Registers an upcaster from (type, version).
    public mutating func register(_ upcaster: Upcaster) {
        upcasters[SchemaKey(upcaster.type, upcaster.fromVersion)] = upcaster
    }

    /// Whether events of `key` are current (no upcasting needed).
    @inlinable public func isCurrent(_ type: String, _ version: UInt32) -> Bool {
        current[type] == version
    }

    /// Whether events stored as `key` can be read: current, or a known schema whose upcaster
    /// chain (following each upcaster's declared outputs) ends in current events only.
    public func canRead(_ key: SchemaKey) -> Bool {
        var visiting: [SchemaKey] = []
        return canRead(key, visiting: &visiting)
    }

    /// `visiting`: the chain of keys being followed (a few at most), to stop at a cycle. Checked
    /// for each stored type at every start: no set, and no schema copied out to test it is there.
    private func canRead(_ key: SchemaKey, visiting: inout [SchemaKey]) -> Bool {
        if current[key.type] == key.version { return schemas.index(forKey: key) != nil }
        guard schemas.index(forKey: key) != nil, let up = upcasters[key], !visiting.contains(key) else { return false }
        visiting.append(key)
        defer { visiting.removeLast() }
        return up.produces.allSatisfy { canRead($0, visiting: &visiting) }
    }

    /// A stable description of the upcaster chain, part of the projection version.
    public var signature: String {
        // `type@version` of each current type, sorted, then the upcasters' names, sorted; all
        // joined by commas (built by hand: it is computed at every start).
        var parts: [String] = []
        parts.reserveCapacity(current.count + upcasters.count)
        for (type, version) in current { parts.append(type + "@" + String(version)) }
        parts.sort()
        let first = parts.count
        for u in upcasters.values { parts.append(u.name) }
        parts[first...].sort()
        var out = ""
        out.reserveCapacity(parts.reduce(parts.count) { $0 + $1.utf8.count })
        for (i, part) in parts.enumerated() {
            if i > 0 { out += "," }
            out += part
        }
        return out
    }

    /// Decodes a stored payload of `key` into fields.
    public func decode(_ key: SchemaKey, payload: UnsafeRawBufferPointer) throws -> RawEvent {
        guard let schema = schemas[key] else {
            throw UpcastError(key: key, message: "no schema is known for this event type and version")
        }
        return RawEvent(type: key.type, version: key.version, fields: try schema.decode(payload))
    }

    /// Lifts a raw event to current events (zero, one or several), step by step.
    public func lift(_ event: RawEvent) throws -> [RawEvent] {
        var pending = [event]
        var done: [RawEvent] = []
        var steps = 0
        while let e = pending.first {
            pending.removeFirst()
            if current[e.type] == e.version {
                done.append(e)
                continue
            }
            let key = SchemaKey(e.type, e.version)
            guard let up = upcasters[key] else {
                throw UpcastError(key: key, message: "no upcaster to the current schema")
            }
            steps += 1
            if steps > 10_000 { throw UpcastError(key: key, message: "upcaster chain does not terminate") }
            pending.insert(contentsOf: try up.lift(e), at: 0)
        }
        return done
    }

    /// Lifts a stored payload to current (type, version, payload) triples.
    public func upcast(_ key: SchemaKey, payload: UnsafeRawBufferPointer) throws -> [(SchemaKey, [UInt8])] {
        if current[key.type] == key.version { return [(key, Array(payload))] }
        let lifted = try lift(try decode(key, payload: payload))
        return try lifted.map { e in
            let k = SchemaKey(e.type, e.version)
            guard let schema = schemas[k] else { throw UpcastError(key: k, message: "no schema for the lifted event") }
            return (k, try schema.encode(e.fields))
        }
    }
}
