public import Basics

/// The type of one payload field.
public enum FieldType: Sendable, Equatable {
    case string
    case optionalString
    case bool
    case integer
    case identifier
    case optionalIdentifier
}

/// A field's value, decoded generically (for upcasters, export and import).
public enum FieldValue: Sendable, Equatable, Hashable {
    case null
    case string(String)
    case bool(Bool)
    case integer(Int64)
    case identifier(Identifier)
}

/// The payload layout of one (event type, schema version): its fields, in stored order.
///
/// Payloads are the fields' values one after another with the ``ByteWriter`` encodings
/// (string, optional string, one byte for a bool, zigzag varint, 16-byte id, flag + id).
public struct PayloadSchema: Sendable, Equatable {
    public struct Field: Sendable, Equatable {
        public let name: String
        public let type: FieldType
        public init(_ name: String, _ type: FieldType) {
            self.name = name
            self.type = type
        }
    }

    public let type: String
    public let version: UInt32
    public let fields: [Field]

    public init(type: String, version: UInt32, fields: [Field]) {
        self.type = type
        self.version = version
        self.fields = fields
    }

    /// Decodes a payload of this schema into named values (in field order).
    public func decode(_ payload: UnsafeRawBufferPointer) throws(DecodingError) -> EventFields {
        var r = ByteReader(payload)
        var values: [(String, FieldValue)] = []
        values.reserveCapacity(fields.count)
        for f in fields {
            let v: FieldValue
            switch f.type {
            case .string: v = .string(try r.readString())
            case .optionalString: v = try r.readOptionalString().map(FieldValue.string) ?? .null
            case .bool: v = .bool(try r.readBool())
            case .integer: v = .integer(try r.readSigned())
            case .identifier: v = .identifier(try r.readIdentifier())
            case .optionalIdentifier: v = try r.readOptionalIdentifier().map(FieldValue.identifier) ?? .null
            }
            values.append((f.name, v))
        }
        try r.expectEnd()
        return EventFields(values)
    }

    public func decode(_ payload: [UInt8]) throws(DecodingError) -> EventFields {
        let result: Result<EventFields, DecodingError> = payload.withUnsafeBytes { p in
            Result { () throws(DecodingError) in try decode(p) }
        }
        return try result.get()
    }

    /// Why fields do not fit a schema.
    public struct MismatchError: Error, Equatable, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Encodes named values into a payload of this schema. Every field must be present with
    /// the right type (`null` only for optional fields); extra fields are an error.
    public func encode(_ values: EventFields) throws(MismatchError) -> [UInt8] {
        var w = ByteWriter()
        for f in fields {
            let v = values[f.name] ?? .null
            switch (f.type, v) {
            case (.string, .string(let s)): w.write(string: s)
            case (.optionalString, .string(let s)): w.write(optionalString: s)
            case (.optionalString, .null): w.write(optionalString: nil)
            case (.bool, .bool(let b)): w.write(bool: b)
            case (.integer, .integer(let i)): w.write(signed: i)
            case (.identifier, .identifier(let id)): w.write(identifier: id)
            case (.optionalIdentifier, .identifier(let id)): w.write(optionalIdentifier: id)
            case (.optionalIdentifier, .null): w.write(optionalIdentifier: nil)
            default:
                let missing = values[f.name] == nil
                throw MismatchError(
                    message: missing
                        ? "\(type) v\(version): missing field \"\(f.name)\""
                        : "\(type) v\(version): field \"\(f.name)\" must be \(f.type.label)")
            }
        }
        for (name, _) in values.pairs where !fields.contains(where: { $0.name == name }) {
            throw MismatchError(message: "\(type) v\(version): unknown field \"\(name)\"")
        }
        return w.bytes
    }
}

extension FieldType {
    var label: String {
        switch self {
        case .string: return "a string"
        case .optionalString: return "a string or null"
        case .bool: return "true or false"
        case .integer: return "an integer"
        case .identifier: return "an id"
        case .optionalIdentifier: return "an id or null"
        }
    }
}

/// Named field values of one event, in order.
public struct EventFields: Sendable, Equatable {
    public var pairs: [(String, FieldValue)]

    public init(_ pairs: [(String, FieldValue)] = []) { self.pairs = pairs }

    public subscript(name: String) -> FieldValue? {
        get { pairs.first(where: { $0.0 == name })?.1 }
        set {
            if let i = pairs.firstIndex(where: { $0.0 == name }) {
                if let v = newValue { pairs[i].1 = v } else { pairs.remove(at: i) }
            } else if let v = newValue {
                pairs.append((name, v))
            }
        }
    }

    public static func == (a: EventFields, b: EventFields) -> Bool {
        a.pairs.count == b.pairs.count && zip(a.pairs, b.pairs).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }
}
