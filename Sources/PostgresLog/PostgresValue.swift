import Basics
import EventStore

/// A statement parameter in PostgreSQL's binary format: its type's OID and its bytes (nil for NULL).
struct PostgresValue {
    /// Type OIDs of the built-in types we send (`pg_type.oid`, fixed since PostgreSQL 7).
    enum OID {
        static let bool: UInt32 = 16
        static let bytea: UInt32 = 17
        static let int8: UInt32 = 20
        static let int2: UInt32 = 21
        static let int4: UInt32 = 23
        static let text: UInt32 = 25
        static let uuid: UInt32 = 2950
        static let byteaArray: UInt32 = 1001
        static let int2Array: UInt32 = 1005
        static let int4Array: UInt32 = 1007
        static let textArray: UInt32 = 1009
        static let int8Array: UInt32 = 1016
        static let uuidArray: UInt32 = 2951
    }

    var type: UInt32
    var bytes: [UInt8]?

    static func uuid(_ id: Identifier) -> PostgresValue { PostgresValue(type: OID.uuid, bytes: uuidBytes(id)) }
    static func int8(_ v: Int64) -> PostgresValue { PostgresValue(type: OID.int8, bytes: bigEndian(v)) }
    static func text(_ s: String) -> PostgresValue { PostgresValue(type: OID.text, bytes: Array(s.utf8)) }
    static func bool(_ b: Bool) -> PostgresValue { PostgresValue(type: OID.bool, bytes: [b ? 1 : 0]) }

    static func uuidArray(_ ids: [Identifier?]) -> PostgresValue {
        array(OID.uuidArray, element: OID.uuid, ids.map { $0.map(uuidBytes) })
    }
    static func textArray(_ strings: [String?]) -> PostgresValue {
        array(OID.textArray, element: OID.text, strings.map { $0.map { Array($0.utf8) } })
    }
    static func byteaArray(_ blobs: [[UInt8]]) -> PostgresValue { array(OID.byteaArray, element: OID.bytea, blobs) }
    static func int8Array(_ values: [Int64]) -> PostgresValue {
        array(OID.int8Array, element: OID.int8, values.map { bigEndian($0) })
    }
    static func int4Array(_ values: [Int32]) -> PostgresValue {
        array(OID.int4Array, element: OID.int4, values.map { bigEndian($0) })
    }
    static func int2Array(_ values: [Int16]) -> PostgresValue {
        array(OID.int2Array, element: OID.int2, values.map { bigEndian($0) })
    }

    /// A one-dimensional array in the binary format of `array_recv`: dimensions, a has-nulls
    /// flag, the element type, then each element as a length (-1 for NULL) and its bytes.
    static func array(_ type: UInt32, element: UInt32, _ elements: [[UInt8]?]) -> PostgresValue {
        var out: [UInt8] = []
        out.reserveCapacity(20 + elements.reduce(0) { $0 + 4 + ($1?.count ?? 0) })
        let hasNull = elements.contains { $0 == nil }
        out += bigEndian(Int32(elements.isEmpty ? 0 : 1))
        out += bigEndian(Int32(hasNull ? 1 : 0))
        out += bigEndian(element)
        if !elements.isEmpty {
            out += bigEndian(Int32(elements.count))
            out += bigEndian(Int32(1))
        }
        for e in elements {
            if let e {
                out += bigEndian(Int32(e.count))
                out += e
            } else {
                out += bigEndian(Int32(-1))
            }
        }
        return PostgresValue(type: type, bytes: out)
    }

    static func uuidBytes(_ id: Identifier) -> [UInt8] { bigEndian(id.high) + bigEndian(id.low) }
}

func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}

/// Reads the binary fields of a reply, naming the column when one has an unexpected shape.
struct FieldReader {
    let result: PostgresResult
    let row: Int

    func required(_ column: Int, _ name: String) throws(RemoteLogError) -> UnsafeRawBufferPointer {
        guard let b = result.bytes(row, column) else { throw .malformedReply("\(name) is NULL") }
        return b
    }

    func int64(_ column: Int, _ name: String) throws(RemoteLogError) -> Int64 {
        let b = try required(column, name)
        guard b.count == 8 else { throw .malformedReply("\(name) has \(b.count) bytes, not 8") }
        return Int64(bigEndian: b.loadUnaligned(as: Int64.self))
    }

    func optionalInt64(_ column: Int, _ name: String) throws(RemoteLogError) -> Int64? {
        result.isNull(row, column) ? nil : try int64(column, name)
    }

    func position(_ column: Int, _ name: String) throws(RemoteLogError) -> UInt64 {
        let v = try int64(column, name)
        guard v >= 0 else { throw .malformedReply("\(name) is negative (\(v))") }
        return UInt64(v)
    }

    func int32(_ column: Int, _ name: String) throws(RemoteLogError) -> Int32 {
        let b = try required(column, name)
        guard b.count == 4 else { throw .malformedReply("\(name) has \(b.count) bytes, not 4") }
        return Int32(bigEndian: b.loadUnaligned(as: Int32.self))
    }

    func bool(_ column: Int, _ name: String) throws(RemoteLogError) -> Bool {
        let b = try required(column, name)
        guard b.count == 1 else { throw .malformedReply("\(name) has \(b.count) bytes, not 1") }
        return b[0] != 0
    }

    func uuid(_ column: Int, _ name: String) throws(RemoteLogError) -> Identifier {
        let b = try required(column, name)
        guard b.count == 16 else { throw .malformedReply("\(name) has \(b.count) bytes, not 16") }
        return Identifier(
            high: UInt64(bigEndian: b.loadUnaligned(as: UInt64.self)),
            low: UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }

    func optionalUUID(_ column: Int, _ name: String) throws(RemoteLogError) -> Identifier? {
        result.isNull(row, column) ? nil : try uuid(column, name)
    }

    func text(_ column: Int, _ name: String) throws(RemoteLogError) -> String {
        let b = try required(column, name)
        guard let s = String(validating: b, as: UTF8.self) else { throw .malformedReply("\(name) is not UTF-8") }
        return s
    }

    func optionalText(_ column: Int, _ name: String) throws(RemoteLogError) -> String? {
        result.isNull(row, column) ? nil : try text(column, name)
    }

    func blob(_ column: Int, _ name: String) throws(RemoteLogError) -> [UInt8] { Array(try required(column, name)) }
}
