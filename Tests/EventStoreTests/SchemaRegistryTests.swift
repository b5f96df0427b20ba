import LMDB
import TestSupport
import Testing

@testable import EventStore

/// A registry with a three-version chain, a 1 -> N split and a retired type.
func evolvingRegistry() -> SchemaRegistry {
    var r = SchemaRegistry()
    let title = PayloadSchema.Field("title", .string)
    let pinned = PayloadSchema.Field("pinned", .bool)
    let tags = PayloadSchema.Field("tags", .optionalString)
    r.registerLegacy(PayloadSchema(type: "Note", version: 1, fields: [title]))
    r.registerLegacy(PayloadSchema(type: "Note", version: 2, fields: [title, pinned]))
    r.registerCurrent(PayloadSchema(type: "Note", version: 3, fields: [title, pinned, tags]))
    r.register(
        Upcaster(type: "Note", from: 1, name: "Note.1->2", produces: [SchemaKey("Note", 2)]) { e in
            var f = e.fields
            f["pinned"] = .bool(false)
            return [RawEvent(type: "Note", version: 2, fields: f)]
        })
    r.register(
        Upcaster(type: "Note", from: 2, name: "Note.2->3", produces: [SchemaKey("Note", 3)]) { e in
            var f = e.fields
            f["tags"] = .null
            return [RawEvent(type: "Note", version: 3, fields: f)]
        })
    r.registerLegacy(
        PayloadSchema(type: "Moved", version: 1, fields: [.init("from", .string), .init("to", .string)]))
    r.registerCurrent(PayloadSchema(type: "Left", version: 1, fields: [.init("place", .string)]))
    r.registerCurrent(PayloadSchema(type: "Arrived", version: 1, fields: [.init("place", .string)]))
    r.register(
        Upcaster(
            type: "Moved", from: 1, name: "Moved.1->split", produces: [SchemaKey("Left", 1), SchemaKey("Arrived", 1)]
        ) { e in
            [
                RawEvent(type: "Left", version: 1, fields: EventFields([("place", e.fields["from"] ?? .null)])),
                RawEvent(type: "Arrived", version: 1, fields: EventFields([("place", e.fields["to"] ?? .null)])),
            ]
        })
    r.registerLegacy(PayloadSchema(type: "Obsolete", version: 1, fields: [.init("x", .integer)]))
    r.register(Upcaster(type: "Obsolete", from: 1, name: "Obsolete.retired", produces: []) { _ in [] })
    return r
}

func payload(_ strings: String...) -> [UInt8] {
    var w = ByteWriter()
    for s in strings { w.write(string: s) }
    return w.bytes
}

@Suite("Schema registry and upcasting")
struct SchemaRegistryTests {
    func upcast(_ r: SchemaRegistry, _ key: SchemaKey, _ bytes: [UInt8]) throws -> [(SchemaKey, [UInt8])] {
        try bytes.withUnsafeBytes { p in try r.upcast(key, payload: p) }
    }

    @Test("a v1 event climbs the chain to v3 with defaults filled")
    func chain() throws {
        let r = evolvingRegistry()
        #expect(r.canRead(SchemaKey("Note", 1)))
        #expect(r.canRead(SchemaKey("Note", 2)))
        #expect(r.canRead(SchemaKey("Note", 3)))
        #expect(r.isCurrent("Note", 3) && !r.isCurrent("Note", 1))
        let out = try upcast(r, SchemaKey("Note", 1), payload("groceries"))
        try #require(out.count == 1)
        #expect(out[0].0 == SchemaKey("Note", 3))
        let fields = try #require(r.schemas[SchemaKey("Note", 3)]).decode(out[0].1)
        #expect(fields == EventFields([("title", .string("groceries")), ("pinned", .bool(false)), ("tags", .null)]))
        // Current events pass through untouched.
        let current = try #require(r.schemas[SchemaKey("Note", 3)]).encode(fields)
        #expect(try upcast(r, SchemaKey("Note", 3), current).map(\.1) == [current])
    }

    @Test("one event becomes several, in order")
    func oneToMany() throws {
        let r = evolvingRegistry()
        #expect(r.canRead(SchemaKey("Moved", 1)))
        let out = try upcast(r, SchemaKey("Moved", 1), payload("home", "work"))
        #expect(out.map(\.0) == [SchemaKey("Left", 1), SchemaKey("Arrived", 1)])
        #expect(out.map(\.1) == [payload("home"), payload("work")])
    }

    @Test("a retired type lifts to nothing")
    func retired() throws {
        let r = evolvingRegistry()
        #expect(r.canRead(SchemaKey("Obsolete", 1)))
        var w = ByteWriter()
        w.write(signed: 5)
        #expect(try upcast(r, SchemaKey("Obsolete", 1), w.bytes).isEmpty)
    }

    @Test("canRead is false for unknown pairs, missing upcasters, unknown outputs and cycles")
    func cannotRead() {
        var r = evolvingRegistry()
        #expect(!r.canRead(SchemaKey("Nope", 1)))
        #expect(!r.canRead(SchemaKey("Note", 4)))
        #expect(!r.canRead(SchemaKey("Note", 0)))
        r.registerLegacy(PayloadSchema(type: "Stranded", version: 1, fields: []))
        #expect(!r.canRead(SchemaKey("Stranded", 1)))
        r.registerLegacy(PayloadSchema(type: "Broken", version: 1, fields: []))
        r.register(
            Upcaster(type: "Broken", from: 1, name: "Broken.1->ghost", produces: [SchemaKey("Ghost", 1)]) { _ in [] })
        #expect(!r.canRead(SchemaKey("Broken", 1)))
        r.registerLegacy(PayloadSchema(type: "Half", version: 1, fields: []))
        r.register(
            Upcaster(
                type: "Half", from: 1, name: "Half.1->split", produces: [SchemaKey("Left", 1), SchemaKey("Ghost", 1)]
            ) {
                _ in []
            })
        #expect(!r.canRead(SchemaKey("Half", 1)))
        r.registerLegacy(PayloadSchema(type: "Loop", version: 1, fields: []))
        r.registerLegacy(PayloadSchema(type: "Loop", version: 2, fields: []))
        r.register(Upcaster(type: "Loop", from: 1, name: "Loop.1->2", produces: [SchemaKey("Loop", 2)]) { _ in [] })
        r.register(Upcaster(type: "Loop", from: 2, name: "Loop.2->1", produces: [SchemaKey("Loop", 1)]) { _ in [] })
        #expect(!r.canRead(SchemaKey("Loop", 1)))
    }

    @Test("damaged legacy payloads and lying upcasters are errors, not traps")
    func upcastErrors() {
        var r = evolvingRegistry()
        #expect(throws: (any Error).self) { try upcast(r, SchemaKey("Note", 1), [0xFF]) }
        #expect(throws: (any Error).self) { try upcast(r, SchemaKey("Note", 1), payload("a", "trailing")) }
        #expect(throws: (any Error).self) { try upcast(r, SchemaKey("Nope", 1), []) }
        r.registerLegacy(PayloadSchema(type: "Liar", version: 1, fields: []))
        r.register(
            Upcaster(type: "Liar", from: 1, name: "Liar.1", produces: [SchemaKey("Left", 1)]) { _ in
                [RawEvent(type: "Ghost", version: 1)]
            })
        #expect(throws: (any Error).self) { try upcast(r, SchemaKey("Liar", 1), []) }
        r.registerLegacy(PayloadSchema(type: "Spin", version: 1, fields: []))
        r.register(Upcaster(type: "Spin", from: 1, name: "Spin.1", produces: []) { e in [e] })
        #expect(throws: (any Error).self) { try upcast(r, SchemaKey("Spin", 1), []) }
    }

    @Test("the signature names the current versions and the upcasters")
    func signature() {
        var r = evolvingRegistry()
        let before = r.signature
        #expect(before.contains("Note@3") && before.contains("Note.1->2"))
        r.register(Upcaster(type: "Extra", from: 1, name: "Extra.1->2", produces: []) { _ in [] })
        #expect(r.signature != before)
        // The text stored projection versions were made from: `type@version` sorted, then the
        // upcasters' names sorted, joined by commas (a change would rebuild every store).
        for registry in [r, evolvingRegistry(), SchemaRegistry()] {
            let names = registry.upcasters.values.map(\.name).sorted()
            let current = registry.current.map { "\($0.key)@\($0.value)" }.sorted()
            #expect(registry.signature == (current + names).joined(separator: ","))
        }
    }

    @Test("a store holding events the registry cannot read is refused, naming them, unchanged")
    func unreadableAtOpen() throws {
        let tmp = TemporaryDirectory()
        var f = EventFactory()
        do {
            // Written by a program that knew more types (a raw registry accepts anything).
            let store = try EventStore(path: tmp.path, configuration: configuration())
            try store.append([f.event("Note", payload: payload("a"), schemaVersion: 1)], to: "n/1")
            try store.append(
                [
                    f.event("Mystery", schemaVersion: 3), f.event("Mystery", schemaVersion: 3),
                    f.event("Nope", schemaVersion: 1),
                ],
                to: "m")
        }
        let before = try #require(fileBytes(tmp.child("data.mdb")))
        let error = #expect(throws: StoreError.self) {
            try EventStore(path: tmp.path, configuration: configuration(registry: evolvingRegistry()))
        }
        guard case .unreadableEvents(let pairs) = error else {
            Issue.record("expected unreadableEvents, got \(String(describing: error))")
            return
        }
        #expect(pairs.map(\.0) == [SchemaKey("Mystery", 3), SchemaKey("Nope", 1)])
        #expect(pairs.map(\.1) == [2, 1])
        let message = error?.description ?? ""
        #expect(message.contains("Mystery v3 (2 events)") && message.contains("left untouched"))
        #expect(fileBytes(tmp.child("data.mdb")) == before)
    }

    @Test("a damaged catalogue entry (its key or its count) refuses the open as damaged")
    func damagedCatalogueAtOpen() throws {
        for damage in ["count", "key"] {
            let tmp = TemporaryDirectory()
            var f = EventFactory()
            do {
                let store = try EventStore(path: tmp.path, configuration: configuration())
                try store.append([f.event("Note", payload: payload("a"), schemaVersion: 1)], to: "n/1")
                try store.environment.write { txn in
                    if damage == "count" {
                        // A count of 3 bytes where 8 are stored.
                        try txn.put(store.meta, key: EventStore.catalogueKey(SchemaKey("Note", 1)), value: [0, 0, 1])
                    } else {
                        // A key without the byte that ends the type's name.
                        try txn.put(store.meta, key: Array("catalogue:Note".utf8), value: [0, 0, 0, 0, 0, 0, 0, 1])
                    }
                }
            }
            let error = #expect(throws: StoreError.self, "\(damage)") {
                try EventStore(path: tmp.path, configuration: configuration(registry: evolvingRegistry()))
            }
            guard case .damaged = error else {
                Issue.record("\(damage): expected damaged, got \(String(describing: error))")
                continue
            }
        }
    }

    @Test("appending a type the registry cannot read is refused")
    func unreadableAppend() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration(registry: evolvingRegistry()))
        var f = EventFactory()
        #expect(throws: StoreError.self) { try store.append([f.event("Mystery")], to: "m") }
        #expect(try store.read { txn throws in try store.headPosition(in: txn) } == 0)
        try store.append([f.event("Note", payload: payload("old"), schemaVersion: 1)], to: "n")
    }

    @Test("stored legacy events are lifted on read")
    func liftOnRead() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration(registry: evolvingRegistry()))
        var f = EventFactory()
        try store.append(
            [
                f.event("Note", payload: payload("t"), schemaVersion: 1),
                f.event("Moved", payload: payload("a", "b"), schemaVersion: 1),
            ], to: "n")
        var w = ByteWriter()
        w.write(signed: 1)
        try store.append([f.event("Obsolete", payload: w.bytes, schemaVersion: 1)], to: "n")
        let lifted = try store.read { txn throws in
            var out: [LiftedEvent] = []
            try store.forEachEvent(from: 1, in: txn) { view throws in
                out += try store.lift(view)
                return true
            }
            return out
        }
        #expect(lifted.map(\.type) == ["Note", "Left", "Arrived"])
        #expect(lifted.map(\.position) == [1, 2, 2])
        #expect(lifted.map(\.version) == [1, 2, 2])
        #expect(lifted.allSatisfy { $0.schemaVersion == ($0.type == "Note" ? 3 : 1) })
    }
}
