import Basics
import EventStore
import Glibc

/// The registry's upcaster plans for legacy note events, compiled to lift stored bytes: a
/// replay reads a legacy payload by its schema into slices and values, and builds each output's
/// ``NotePayload`` from them as the plan says, with no field dictionary, no re-encoding and no
/// string. The plan is the upcaster's one declaration (``UpcastPlan``); the lift the registry
/// runs is derived from the same plan, and the replay tests compare the two.
///
/// A plan is compiled only when every output is a current note event and every value fits its
/// field as the general lift would encode it; any other upcaster (one without a plan, one that
/// lifts to an older version, one with a text constant) takes the general path.
struct LegacyLifts {
    /// One decoded value of a legacy payload.
    enum Value: Equatable {
        case null
        case text(UnsafeRawBufferPointer)
        case bool(Bool)
        case integer(Int64)
        case identifier(Identifier)

        static func == (a: Value, b: Value) -> Bool {
            switch (a, b) {
            case (.null, .null): return true
            case (.bool(let x), .bool(let y)): return x == y
            case (.integer(let x), .integer(let y)): return x == y
            case (.identifier(let x), .identifier(let y)): return x == y
            case (.text(let x), .text(let y)): return x.elementsEqual(y)
            default: return false
            }
        }
    }

    /// Where an output field comes from.
    enum Source {
        case index(Int)
        case constant(Value)
    }

    /// One output of a compiled plan.
    struct Output {
        let kind: NoteEventKind
        /// The condition: the value at an index equals (or not) a constant; nil is always.
        let condition: (index: Int?, value: Value, equal: Bool)?
        let sources: [(field: NoteField, source: Source)]

        func holds(for values: [Value]) -> Bool {
            guard let c = condition else { return true }
            let matches = c.index.map { values[$0] == c.value } ?? false
            return matches == c.equal
        }

        func payload(from values: [Value]) -> NotePayload<TextSlice> {
            var p = NotePayload<TextSlice>()
            for (field, source) in sources {
                let v: Value
                switch source {
                case .index(let i): v = values[i]
                case .constant(let c): v = c
                }
                switch (field, v) {
                case (.title, .text(let t)): p.title = TextSlice(bytes: t)
                case (.body, .text(let t)): p.body = TextSlice(bytes: t)
                case (.pinned, .bool(let b)): p.pinned = b
                case (.category, .identifier(let id)): p.category = id
                case (.fromVersion, .integer(let n)): p.fromVersion = UInt64(clamping: n)
                default: break  // .null into an optional id; the compiler refused every other pair
                }
            }
            return p
        }
    }

    /// A compiled upcaster.
    struct Lift {
        let type: [UInt8]
        let version: UInt32
        let fieldTypes: [FieldType]
        let outputs: [Output]

        /// Reads the legacy payload whole, by its schema.
        func decode(_ payload: UnsafeRawBufferPointer) throws(DecodingError) -> [Value] {
            var r = ByteReader(payload)
            var values: [Value] = []
            values.reserveCapacity(fieldTypes.count)
            for t in fieldTypes {
                switch t {
                case .string: values.append(.text(try r.readUTF8()))
                case .bool: values.append(.bool(try r.readBool()))
                case .integer: values.append(.integer(try r.readSigned()))
                case .identifier: values.append(.identifier(try r.readIdentifier()))
                case .optionalIdentifier: values.append(try r.readOptionalIdentifier().map(Value.identifier) ?? .null)
                case .optionalString: preconditionFailure("not compiled")
                }
            }
            try r.expectEnd()
            return values
        }
    }

    private var lifts: [Lift] = []

    init() {}

    /// Compiles every plan of `registry` that lifts a legacy schema straight to current note events.
    init(_ registry: SchemaRegistry) {
        for (key, upcaster) in registry.upcasters.sorted(by: { $0.key < $1.key }) {
            guard let plan = upcaster.plan, !registry.isCurrent(key.type, key.version),
                let schema = registry.schemas[key], let lift = Self.compile(plan, from: schema)
            else { continue }
            lifts.append(lift)
        }
    }

    /// The compiled lift of stored events of this type and version, or nil.
    @inline(__always)
    func lift(_ type: UnsafeRawBufferPointer, version: UInt32) -> Lift? {
        guard !lifts.isEmpty, let base = type.baseAddress else { return nil }
        for l in lifts where l.version == version && l.type.count == type.count {
            if l.type.withUnsafeBytes({ memcmp(base, $0.baseAddress!, type.count) }) == 0 { return l }
        }
        return nil
    }

    private static func compile(_ plan: UpcastPlan, from schema: PayloadSchema) -> Lift? {
        let types = schema.fields.map(\.type)
        guard !types.contains(.optionalString) else { return nil }
        func index(_ name: String) -> Int? { schema.fields.firstIndex { $0.name == name } }
        func value(_ v: FieldValue) -> Value? {
            switch v {
            case .null: return .null
            case .bool(let b): return .bool(b)
            case .integer(let n): return .integer(n)
            case .identifier(let id): return .identifier(id)
            case .string: return nil  // no slice to hold a constant text: the general path
            }
        }
        var outputs: [Output] = []
        for out in plan.outputs {
            guard let kind = NoteEventKind.matcher.kind(out.type, version: out.version) else { return nil }
            var sources: [(field: NoteField, source: Source)] = []
            for field in kind.layout.fields {
                guard let mapping = out.fields.first(where: { $0.name == field.name }) else { return nil }
                let source: Source
                let sourceType: FieldType?
                switch mapping.source {
                case .field(let name, let fallback):
                    if let i = index(name) {
                        source = .index(i)
                        sourceType = schema.fields[i].type
                    } else if fallback == .string(""), field.type == .string {
                        source = .constant(.text(UnsafeRawBufferPointer(start: nil, count: 0)))
                        sourceType = .string
                    } else {
                        guard let c = value(fallback) else { return nil }
                        source = .constant(c)
                        sourceType = nil
                    }
                case .constant(let c):
                    guard let v = value(c) else { return nil }
                    source = .constant(v)
                    sourceType = nil
                }
                // The general lift encodes the lifted fields with the current schema: compile only
                // what that encoding accepts as it is.
                if let sourceType, sourceType != field.type { return nil }
                if case .constant(let c) = source, !Self.fits(c, field.type) { return nil }
                sources.append((field, source))
            }
            guard out.fields.count == sources.count else { return nil }
            var condition: (index: Int?, value: Value, equal: Bool)?
            switch out.condition {
            case .always: condition = nil
            case .when(let name, let v), .unless(let name, let v):
                guard let c = value(v) else { return nil }
                if case .when = out.condition {
                    condition = (index(name), c, true)
                } else {
                    condition = (index(name), c, false)
                }
            }
            outputs.append(Output(kind: kind, condition: condition, sources: sources))
        }
        return Lift(type: Array(schema.type.utf8), version: schema.version, fieldTypes: types, outputs: outputs)
    }

    private static func fits(_ v: Value, _ type: FieldType) -> Bool {
        switch (v, type) {
        case (.null, .optionalIdentifier), (.identifier, .optionalIdentifier), (.identifier, .identifier),
            (.bool, .bool), (.integer, .integer), (.text, .string):
            return true
        default: return false
        }
    }
}
