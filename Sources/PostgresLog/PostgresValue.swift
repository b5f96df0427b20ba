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
        array(OID.uuidArray, element: OID.uuid, count: ids.count, hasNull: ids.contains(nil), bytes: 16 * ids.count) {
            out, i in
            guard let id = ids[i] else { return false }
            out.appendBigEndian(id.high)
            out.appendBigEndian(id.low)
            return true
        }
    }
    static func textArray(_ strings: [String?]) -> PostgresValue {
        array(
            OID.textArray, element: OID.text, count: strings.count, hasNull: strings.contains(nil),
            bytes: strings.reduce(0) { $0 + ($1?.utf8.count ?? 0) }
        ) { out, i in
            guard let s = strings[i] else { return false }
            out.append(contentsOf: s.utf8)
            return true
        }
    }
    static func byteaArray(_ blobs: [[UInt8]]) -> PostgresValue {
        array(
            OID.byteaArray, element: OID.bytea, count: blobs.count, hasNull: false,
            bytes: blobs.reduce(0) { $0 + $1.count }
        ) { out, i in
            out.append(contentsOf: blobs[i])
            return true
        }
    }
    static func int8Array(_ values: [Int64?]) -> PostgresValue {
        array(
            OID.int8Array, element: OID.int8, count: values.count, hasNull: values.contains(nil),
            bytes: 8 * values.count
        ) { out, i in
            guard let v = values[i] else { return false }
            out.appendBigEndian(v)
            return true
        }
    }
    static func int4Array(_ values: [Int32]) -> PostgresValue {
        array(OID.int4Array, element: OID.int4, count: values.count, hasNull: false, bytes: 4 * values.count) {
            out, i in
            out.appendBigEndian(values[i])
            return true
        }
    }
    static func int2Array(_ values: [Int16]) -> PostgresValue {
        array(OID.int2Array, element: OID.int2, count: values.count, hasNull: false, bytes: 2 * values.count) {
            out, i in
            out.appendBigEndian(values[i])
            return true
        }
    }

    /// A one-dimensional array in the binary format of `array_recv`: dimensions, a has-nulls
    /// flag, the element type, then each element as a length (-1 for NULL) and its bytes.
    /// `write` appends element `i`'s bytes and says whether it is there (false: NULL); `bytes`,
    /// the elements' total size, sizes the buffer once.
    static func array(
        _ type: UInt32, element: UInt32, count: Int, hasNull: Bool, bytes: Int,
        _ write: (inout [UInt8], Int) -> Bool
    ) -> PostgresValue {
        var out: [UInt8] = []
        out.reserveCapacity(20 + 4 * count + bytes)
        out.appendBigEndian(Int32(count == 0 ? 0 : 1))
        out.appendBigEndian(Int32(hasNull ? 1 : 0))
        out.appendBigEndian(element)
        if count > 0 {
            out.appendBigEndian(Int32(count))
            out.appendBigEndian(Int32(1))
        }
        for i in 0..<count {
            // The element's length goes before it, once its bytes are written.
            let at = out.count
            out.appendBigEndian(Int32(0))
            if write(&out, i) {
                let length = Int32(out.count - at - 4).bigEndian
                withUnsafeBytes(of: length) { b in
                    for k in 0..<4 { out[at + k] = b[k] }
                }
            } else {
                out.removeLast(4)
                out.appendBigEndian(Int32(-1))
            }
        }
        return PostgresValue(type: type, bytes: out)
    }

    static func uuidBytes(_ id: Identifier) -> [UInt8] { bigEndian(id.high) + bigEndian(id.low) }
}

func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}

extension [UInt8] {
    /// Appends `value` in network byte order.
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
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

    /// A `bigint[]` of one dimension (or none: empty) in `array_send`'s format, NULL elements as
    /// nil; nil for a NULL field.
    func optionalInt64Array(_ column: Int, _ name: String) throws(RemoteLogError) -> [Int64?]? {
        guard let b = result.bytes(row, column) else { return nil }
        func int32(_ at: Int) throws(RemoteLogError) -> Int32 {
            guard at >= 0, at + 4 <= b.count else { throw .malformedReply("\(name) ends inside its array") }
            return Int32(bigEndian: b.loadUnaligned(fromByteOffset: at, as: Int32.self))
        }
        let dimensions = try int32(0)
        guard try UInt32(bitPattern: int32(8)) == PostgresValue.OID.int8 else {
            throw .malformedReply("\(name) is not an array of bigint")
        }
        if dimensions == 0 { return [] }
        guard dimensions == 1 else { throw .malformedReply("\(name) has \(dimensions) dimensions, not 1") }
        let count = Int(try int32(12))
        guard count >= 0, count <= (b.count - 20) / 4 else { throw .malformedReply("\(name) counts \(count) elements") }
        var values: [Int64?] = []
        values.reserveCapacity(count)
        var at = 20
        for _ in 0..<count {
            let length = try int32(at)
            at += 4
            if length == -1 {
                values.append(nil)
                continue
            }
            guard length == 8, at + 8 <= b.count else {
                throw .malformedReply("\(name) has an element of \(length) bytes")
            }
            values.append(Int64(bigEndian: b.loadUnaligned(fromByteOffset: at, as: Int64.self)))
            at += 8
        }
        guard at == b.count else { throw .malformedReply("\(name) has bytes after its elements") }
        return values
    }
}
