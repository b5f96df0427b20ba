public import Basics
public import EventStore
import Glibc
public import Notes

/// The event interchange format: JSON Lines, one event per line, oldest first.
///
/// ```json
/// {"position":17,"eventId":"0b9c…","stream":"note/5f1e…","version":3,"type":"NoteRetitled",
///  "schemaVersion":1,"recordedAt":"2026-11-29T12:00:00.123456Z","metadata":{"actor":"ana@laptop"},
///  "data":{"title":"…"}}
/// ```
///
/// Keys come in this order; `metadata` holds `actor` and, only when present, `command`,
/// `causationId`, `correlationId` and `writtenAt` (the device's own instant of an event a shared
/// log recorded at its own, RFC 3339: shown, never used for ordering); `data` holds the
/// payload's fields by name in schema order (ids as canonical UUID strings, `null` for an absent
/// optional). The writer is deterministic, so exporting the same events always gives the same
/// bytes.
public enum EventLine {
    /// Appends the line of one event, newline included, to `output`.
    public static func write(
        position: UInt64, id: Identifier, stream: String, version: UInt64, type: String, schemaVersion: UInt32,
        recordedAt: Int64, metadata: EventMetadata, data: EventFields, to output: inout [UInt8]
    ) {
        var meta: [(key: String, value: JSONValue)] = [("actor", .string(metadata.actor))]
        if let c = metadata.command { meta.append(("command", .string(c))) }
        if let c = metadata.causationID { meta.append(("causationId", .string(c.uuidString))) }
        if let c = metadata.correlationID { meta.append(("correlationId", .string(c.uuidString))) }
        if let at = metadata.writtenAt { meta.append(("writtenAt", .string(RFC3339.format(micros: at)))) }
        let line = JSONValue.object([
            ("position", .uint(position)),
            ("eventId", .string(id.uuidString)),
            ("stream", .string(stream)),
            ("version", .uint(version)),
            ("type", .string(type)),
            ("schemaVersion", .uint(UInt64(schemaVersion))),
            ("recordedAt", .string(RFC3339.format(micros: recordedAt))),
            ("metadata", .object(meta)),
            ("data", .object(data.pairs.map { (key: $0.0, value: json($0.1)) })),
        ])
        line.write(to: &output)
        output.append(0x0A)
    }

    static func json(_ value: FieldValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .string(let s): return .string(s)
        case .bool(let b): return .bool(b)
        case .integer(let i): return .int(i)
        case .identifier(let id): return .string(id.uuidString)
        }
    }

    /// The keys a line may have, in the order they are written.
    static let keys = [
        "position", "eventId", "stream", "version", "type", "schemaVersion", "recordedAt", "metadata", "data",
    ]
}

/// One validated line of an import: the event to append and where it goes.
public struct ImportedEvent: Sendable, Equatable {
    /// The 1-based line number in the file, for messages.
    public var line: Int
    public var stream: String
    /// The stream version the line claims; the import checks it continues the stream.
    public var version: UInt64
    public var event: NewEvent
}

/// Why a line of an import file was refused. Nothing is imported when any line is refused.
public struct InterchangeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The 1-based line number.
    public let line: Int
    public let reason: String

    public init(line: Int, _ reason: String) {
        self.line = line
        self.reason = reason
    }

    /// `line 12: <reason>; nothing was imported`.
    public var description: String { input.description }

    /// The refusal as the notebook reports it.
    public var input: InvalidInput { .line(line, reason: reason) }
}

/// The lines of an import, parsed and validated; ``Notebook/importEvents(_:)`` appends them.
///
/// Everything that can be checked without the store is checked here, line by line: the JSON,
/// the keys and their types, the stream name, that the (type, schema version) is known (legacy
/// schemas are accepted and upcast when read), the payload fields, the body limit, and that no
/// event id appears twice. The stream versions are checked against the store when appending.
///
/// ```swift
/// var batch = EventBatch(maxBodyBytes: book.options.maxBodyBytes)
/// for line in lines { try batch.add(line: line) }
/// let summary = try book.importEvents(batch)
/// ```
public struct EventBatch: Sendable {
    public let registry: SchemaRegistry
    public let maxBodyBytes: Int
    public private(set) var events: [ImportedEvent] = []
    /// Lines seen so far, blank ones included.
    public private(set) var lineCount = 0
    private var firstLine: [Identifier: Int] = [:]
    private var fastSchemas: [FastEventLine.Schema] = []
    /// Whether lines go through ``FastEventLine`` first (tests compare both paths).
    var fastPath = true

    public init(registry: SchemaRegistry = NotesSchema.registry, maxBodyBytes: Int = 1 << 20) {
        self.registry = registry
        self.maxBodyBytes = maxBodyBytes
    }

    /// Parses and validates the next line (without its newline). Blank lines are skipped.
    package mutating func add(line bytes: UnsafeRawBufferPointer) throws(InterchangeError) {
        lineCount += 1
        let n = lineCount
        if ImportInput.isBlank(bytes) { return }
        let event: ImportedEvent
        if fastPath,
            let e = FastEventLine.read(
                bytes.assumingMemoryBound(to: UInt8.self), line: n, schemas: &fastSchemas, registry: registry,
                maxBodyBytes: maxBodyBytes)
        {
            event = e
        } else {
            event = try parseGeneric(bytes, line: n)
        }
        if let first = firstLine.updateValue(n, forKey: event.event.id) {
            firstLine[event.event.id] = first
            throw InterchangeError(
                line: n, "event id \(event.event.id) appears twice in the file (first on line \(first))")
        }
        events.append(event)
    }

    /// The line through the generic JSON parser and the checks below: the reference the fast
    /// path agrees with, and the source of every message.
    func parseGeneric(_ bytes: UnsafeRawBufferPointer, line n: Int) throws(InterchangeError) -> ImportedEvent {
        let value: JSONValue
        do { value = try JSONValue.parse(bytes) } catch {
            // A UTF-16 byte-order mark (PowerShell's `>` writes the file so): the bytes are
            // another encoding, not broken JSON (before 2026-12-06 "expected a value at byte 0").
            if n == 1, bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
                throw InterchangeError(
                    line: n,
                    "the file is UTF-16, not UTF-8: convert it (iconv -f UTF-16 -t UTF-8 FILE > NEW) and import that")
            }
            if n == 1, bytes.starts(with: ImportInput.gzipMagic) {
                throw InterchangeError(line: n, ImportInput.gzipRefusal)
            }
            if error.reason == .invalidUTF8 {
                throw InterchangeError(line: n, "invalid UTF-8 at byte \(error.offset)")
            }
            throw InterchangeError(line: n, "malformed JSON: \(error)")
        }
        do { return try parse(value, line: n) } catch { throw InterchangeError(line: n, error.message) }
    }

    /// Hands over the events gathered so far (the duplicate-id check still spans the whole file).
    mutating func takeEvents() -> [ImportedEvent] {
        var out: [ImportedEvent] = []
        swap(&out, &events)
        return out
    }

    /// ``add(line:)`` for any byte collection.
    public mutating func add(line: some Collection<UInt8>) throws(InterchangeError) {
        try withContiguousBytes(line) { (b) throws(InterchangeError) in try add(line: b) }
    }

    struct Problem: Error { let message: String }

    private func parse(_ value: JSONValue, line: Int) throws(Problem) -> ImportedEvent {
        guard let members = value.objectValue else { throw Problem(message: "expected a JSON object") }
        // Before 2026-12-07 `unknown key "doc"`, which did not say which command reads the file.
        if line == 1, value["doc"] != nil, value["op"] != nil, value["eventId"] == nil {
            throw Problem(
                message: "a line of a document edit history, not an event: import it with `notes import-history FILE`")
        }
        for m in members where !EventLine.keys.contains(m.key) {
            throw Problem(message: "unknown key \"\(m.key)\"")
        }
        if let p = value["position"], p.uint64Value == nil {
            throw Problem(message: "\"position\" must be a whole number")
        }
        let idText = try string(value, "eventId")
        guard let id = Identifier(canonical: idText) else {
            throw Problem(message: "eventId \(idText.jsonQuoted) is not a UUID")
        }
        let stream = try string(value, "stream")
        let kind = try Self.streamKind(stream)
        guard let versionValue = value["version"] else { throw Problem(message: "missing key \"version\"") }
        guard let version = versionValue.uint64Value, version >= 1 else {
            throw Problem(message: "\"version\" must be a whole number of at least 1")
        }
        let type = try string(value, "type")
        guard let schemaValue = value["schemaVersion"] else { throw Problem(message: "missing key \"schemaVersion\"") }
        guard let schemaNumber = schemaValue.uint64Value, let schemaVersion = UInt32(exactly: schemaNumber) else {
            throw Problem(message: "\"schemaVersion\" must be a whole number")
        }
        let key = SchemaKey(type, schemaVersion)
        guard let schema = registry.schemas[key] else {
            let known = registry.schemas.keys.filter { $0.type == type }.map(\.version).sorted()
            if known.isEmpty { throw Problem(message: "unknown event type \(type.jsonQuoted)") }
            let list = known.map(String.init).joined(separator: ", ")
            throw Problem(message: "\(type) has no schema version \(schemaVersion) (known: \(list))")
        }
        guard StreamFamily.of(type: type) == kind else {
            throw Problem(message: "\(type) does not belong in stream \(stream)")
        }
        let creates = type == kind.creationType
        if creates != (version == 1) {
            throw Problem(
                message: creates
                    ? "\(type) must be version 1 of its stream, not \(version)"
                    : "version 1 of \(stream) must be a \(kind.creationType) event, not \(type)"
            )
        }
        let recordedText = try string(value, "recordedAt")
        guard let recordedAt = RFC3339.parse(recordedText) else {
            throw Problem(message: "recordedAt \(recordedText.jsonQuoted) is not an RFC 3339 instant")
        }
        let metadata = try Self.metadata(value["metadata"])
        guard let data = value["data"] else { throw Problem(message: "missing key \"data\"") }
        let fields = try Self.fields(data, schema: schema)
        try check(fields, family: kind)
        let payload: [UInt8]
        do { payload = try schema.encode(fields) } catch { throw Problem(message: "data: \(error.message)") }
        return ImportedEvent(
            line: line, stream: stream, version: version,
            event: NewEvent(
                id: id, type: type, schemaVersion: schemaVersion, payload: payload, metadata: metadata,
                recordedAt: recordedAt))
    }

    private func string(_ value: JSONValue, _ key: String) throws(Problem) -> String {
        guard let v = value[key] else { throw Problem(message: "missing key \"\(key)\"") }
        guard let s = v.stringValue else { throw Problem(message: "\"\(key)\" must be a string") }
        return s
    }

    /// `note/UUID`, `category/UUID` or `tag/UUID`, the UUID in canonical lowercase form (the key the store
    /// looks the stream up by).
    static func streamKind(_ stream: String) throws(Problem) -> StreamFamily {
        guard let family = StreamRef(stream).family else {
            throw Problem(
                message: "stream \(stream.jsonQuoted) is not note/UUID, category/UUID or tag/UUID (lowercase UUID)")
        }
        return family
    }

    static func metadata(_ value: JSONValue?) throws(Problem) -> EventMetadata {
        guard let value else { throw Problem(message: "missing key \"metadata\"") }
        guard let members = value.objectValue else { throw Problem(message: "\"metadata\" must be an object") }
        var meta = EventMetadata(actor: "")
        var hasActor = false
        for m in members {
            switch m.key {
            case "actor":
                guard let s = m.value.stringValue else { throw Problem(message: "metadata.actor must be a string") }
                meta.actor = s
                hasActor = true
            case "command":
                if m.value.isNull { continue }
                guard let s = m.value.stringValue else {
                    throw Problem(message: "metadata.command must be a string or null")
                }
                meta.command = s
            case "causationId", "correlationId":
                if m.value.isNull { continue }
                guard let s = m.value.stringValue, let id = Identifier(canonical: s) else {
                    throw Problem(message: "metadata.\(m.key) must be a UUID or null")
                }
                if m.key == "causationId" { meta.causationID = id } else { meta.correlationID = id }
            case "writtenAt":
                if m.value.isNull { continue }
                guard let s = m.value.stringValue, let at = RFC3339.parse(s),
                    EventMetadata.writtenAtRange.contains(at)
                else {
                    throw Problem(message: "metadata.writtenAt must be an RFC 3339 instant (years 1 to 9999) or null")
                }
                meta.writtenAt = at
            default:
                throw Problem(message: "unknown key \"metadata.\(m.key)\"")
            }
        }
        guard hasActor else { throw Problem(message: "missing key \"metadata.actor\"") }
        return meta
    }

    /// The JSON `data` object as fields typed by the schema; missing and extra fields are left
    /// for ``PayloadSchema/encode(_:)`` to name.
    static func fields(_ data: JSONValue, schema: PayloadSchema) throws(Problem) -> EventFields {
        guard let members = data.objectValue else { throw Problem(message: "\"data\" must be an object") }
        var fields = EventFields()
        for m in members {
            guard let field = schema.fields.first(where: { $0.name == m.key }) else {
                throw Problem(message: "data: \(schema.type) v\(schema.version): unknown field \"\(m.key)\"")
            }
            let v: FieldValue?
            switch (field.type, m.value) {
            case (.optionalString, .null), (.optionalIdentifier, .null): v = .null
            case (.string, .string(let s)), (.optionalString, .string(let s)): v = .string(s)
            case (.bool, .bool(let b)): v = .bool(b)
            case (.integer, .number(let n)): v = n.int64Value.map(FieldValue.integer)
            case (.identifier, .string(let s)), (.optionalIdentifier, .string(let s)):
                v = Identifier(canonical: s).map(FieldValue.identifier)
            default: v = nil
            }
            guard let v else {
                throw Problem(
                    message: "data: \(schema.type) v\(schema.version): field \"\(m.key)\" must be \(label(field.type))")
            }
            fields[m.key] = v
        }
        return fields
    }

    static func label(_ type: FieldType) -> String {
        switch type {
        case .string: return "a string"
        case .optionalString: return "a string or null"
        case .bool: return "true or false"
        case .integer: return "a whole number"
        case .identifier: return "a UUID"
        case .optionalIdentifier: return "a UUID or null"
        }
    }

    /// The limits every command enforces: bodies within the limit and free of NUL, titles,
    /// category and tag names as ``Notebook`` stores them (trimmed, one line, within their
    /// lengths; tag names with no empty part).
    private func check(_ fields: EventFields, family: StreamFamily) throws(Problem) {
        for (name, value) in fields.pairs {
            guard case .string(let s) = value else { continue }
            switch name {
            case "body", "content":
                let size = s.utf8.count
                if size > maxBodyBytes {
                    throw Problem(
                        message: NotesError.validation(.bodyTooLarge(bytes: size, limit: maxBodyBytes)).description)
                }
                if containsNUL(s) { throw Problem(message: "the body contains a NUL character") }
            case "title":
                let valid: String
                do { valid = try Notebook.validTitle(s) } catch { throw Problem(message: error.description) }
                guard valid == s else { throw Problem(message: "the title has leading or trailing white space") }
            case "name" where family == .tag:
                let valid: String
                do { valid = try Notebook.validTagName(s) } catch { throw Problem(message: error.description) }
                guard valid == s else {
                    throw Problem(
                        message: "the tag name has white space around a part; write it as \(valid.jsonQuoted)")
                }
            case "name":
                let valid: String
                do { valid = try Notebook.validCategoryName(s) } catch { throw Problem(message: error.description) }
                guard valid == s else {
                    throw Problem(message: "the category name has leading or trailing white space")
                }
            default: break
            }
        }
    }
}

/// The import's fast path: reads a line straight from its bytes, without a tree of JSON
/// values, and gives the same ``ImportedEvent`` the generic path (``JSONValue`` then the
/// checks of ``EventBatch``) gives.
///
/// It only accepts what it fully understands: one object whose keys are spelled without
/// escapes, integers without fraction or exponent, each key once, `data` after `type` and
/// `schemaVersion`, every payload field present. Anything else (including every invalid line)
/// makes it return nil, and the generic path then accepts the line or names its problem, so
/// the messages are the generic path's. Strings go through ``JSONScanner/parseString()``: the
/// same UTF-8, escape and control character checks.
struct FastEventLine {
    /// A schema with its field names as bytes, cached per batch.
    struct Schema {
        let key: SchemaKey
        let typeBytes: [UInt8]
        let schema: PayloadSchema
        let names: [[UInt8]]
        let family: StreamFamily?
        let creates: Bool

        init(_ schema: PayloadSchema) {
            key = SchemaKey(schema.type, schema.version)
            typeBytes = Array(schema.type.utf8)
            self.schema = schema
            names = schema.fields.map { Array($0.name.utf8) }
            family = StreamFamily.of(type: schema.type)
            creates = family.map { schema.type == $0.creationType } ?? false
        }
    }

    private var p: JSONScanner

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        p = JSONScanner(bytes)
    }

    /// The event of `bytes`, or nil when the generic path must decide.
    static func read(
        _ bytes: UnsafeBufferPointer<UInt8>, line: Int, schemas: inout [Schema], registry: SchemaRegistry,
        maxBodyBytes: Int
    ) -> ImportedEvent? {
        var r = FastEventLine(bytes)
        return r.event(line: line, schemas: &schemas, registry: registry, maxBodyBytes: maxBodyBytes)
    }

    // MARK: Tokens

    private mutating func expect(_ byte: UInt8) -> Bool { p.consume(byte) }
    private mutating func memberEnd() -> Bool? { p.memberEnd() }
    private mutating func plainString() -> UnsafeBufferPointer<UInt8>? { p.plainString() }
    private mutating func string() -> String? { p.string() }
    private mutating func literal(_ word: StaticString) -> Bool { p.literal(word) }
    private mutating func integer() -> (negative: Bool, magnitude: UInt64)? { p.integer() }

    /// The index of `key` in `names`, trying `expected` first (lines list keys in order).
    private static func find(_ key: UnsafeBufferPointer<UInt8>, in names: [[UInt8]], expected: Int) -> Int? {
        if expected < names.count, equal(key, names[expected]) { return expected }
        return names.firstIndex { equal(key, $0) }
    }

    private static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return b.withUnsafeBufferPointer { b in
            guard let x = a.baseAddress, let y = b.baseAddress else { return true }
            return memcmp(x, y, a.count) == 0
        }
    }

    private mutating func unsigned() -> UInt64? {
        guard let n = integer(), !n.negative else { return nil }
        return n.magnitude
    }

    /// The next key (plain ASCII) and the colon after it.
    private mutating func key() -> UnsafeBufferPointer<UInt8>? {
        guard let k = plainString(), expect(UInt8(ascii: ":")) else { return nil }
        return k
    }

    /// The index in `names` of the next key, and the colon after it: `names[expected]` (lines
    /// list keys in order) compared in place, else any key, found by ``find(_:in:expected:)``.
    private mutating func key(in names: [[UInt8]], expected: Int) -> Int? {
        if expected < names.count, names[expected].withUnsafeBufferPointer({ p.consumePlainString($0) }) {
            return expect(UInt8(ascii: ":")) ? expected : nil
        }
        guard let k = key() else { return nil }
        return Self.find(k, in: names, expected: expected)
    }

    // MARK: The line

    private static let keys: [[UInt8]] = EventLine.keys.map { Array($0.utf8) }

    private mutating func event(
        line: Int, schemas: inout [Schema], registry: SchemaRegistry, maxBodyBytes: Int
    ) -> ImportedEvent? {
        guard expect(UInt8(ascii: "{")) else { return nil }
        var seen: UInt16 = 0
        var id: Identifier?
        var stream: String?
        var kind: StreamFamily?
        var version: UInt64?
        var typeBytes: UnsafeBufferPointer<UInt8>?
        var schemaVersion: UInt32?
        var recordedAt: Int64?
        var metadata: EventMetadata?
        var found: Schema?
        var payload: [UInt8]?
        while true {
            guard let index = key(in: Self.keys, expected: seen.nonzeroBitCount) else { return nil }
            guard seen & (1 << index) == 0 else { return nil }
            seen |= 1 << index
            switch index {
            case 0:  // position: any whole number, ignored
                guard unsigned() != nil else { return nil }
            case 1:
                guard let s = plainString(), let v = Identifier(canonical: UnsafeRawBufferPointer(s)) else {
                    return nil
                }
                id = v
            case 2:
                guard let s = plainString(), let k = Self.streamKind(s) else { return nil }
                stream = String(decoding: s, as: UTF8.self)
                kind = k
            case 3:
                guard let v = unsigned(), v >= 1 else { return nil }
                version = v
            case 4:
                guard let s = plainString() else { return nil }
                typeBytes = s
            case 5:
                guard let v = unsigned(), let v32 = UInt32(exactly: v) else { return nil }
                schemaVersion = v32
            case 6:
                guard let s = plainString(), let v = RFC3339.parse(utf8: s) else { return nil }
                recordedAt = v
            case 7:
                guard let m = readMetadata() else { return nil }
                metadata = m
            default:
                guard let typeBytes, let schemaVersion,
                    let s = Self.schema(typeBytes, schemaVersion, &schemas, registry)
                else { return nil }
                guard let bytes = readData(s, maxBodyBytes: maxBodyBytes) else { return nil }
                found = s
                payload = bytes
            }
            guard let more = memberEnd() else { return nil }
            if !more { break }
        }
        p.skipWhitespace()
        guard p.current == nil, let id, let stream, let kind, let version, let schemaVersion, let recordedAt,
            let metadata, let found, let payload
        else { return nil }
        guard found.family == kind, found.creates == (version == 1) else { return nil }
        return ImportedEvent(
            line: line, stream: stream, version: version,
            event: NewEvent(
                id: id, type: found.key.type, schemaVersion: schemaVersion, payload: payload, metadata: metadata,
                recordedAt: recordedAt))
    }

    static func schema(
        _ type: UnsafeBufferPointer<UInt8>, _ version: UInt32, _ cache: inout [Schema], _ registry: SchemaRegistry
    ) -> Schema? {
        if let s = cache.first(where: { $0.key.version == version && equal(type, $0.typeBytes) }) { return s }
        guard let schema = registry.schemas[SchemaKey(String(decoding: type, as: UTF8.self), version)] else {
            return nil
        }
        let s = Schema(schema)
        cache.append(s)
        return s
    }

    /// ``EventBatch/streamKind(_:)`` over the bytes.
    static func streamKind(_ s: UnsafeBufferPointer<UInt8>) -> StreamFamily? {
        StreamRef(UnsafeRawBufferPointer(s)).family
    }

    private static let metadataKeys: [[UInt8]] = ["actor", "command", "causationId", "correlationId", "writtenAt"].map {
        Array($0.utf8)
    }

    private mutating func readMetadata() -> EventMetadata? {
        guard expect(UInt8(ascii: "{")) else { return nil }
        var meta = EventMetadata(actor: "")
        var seen: UInt8 = 0
        while true {
            guard let index = key(in: Self.metadataKeys, expected: seen.nonzeroBitCount), seen & (1 << index) == 0
            else { return nil }
            seen |= 1 << index
            switch index {
            case 0:
                guard let s = string() else { return nil }
                meta.actor = s
            case 1:
                if literal("null") { break }
                guard let s = string() else { return nil }
                meta.command = s
            case 4:
                if literal("null") { break }
                guard let s = plainString(), let at = RFC3339.parse(utf8: s),
                    EventMetadata.writtenAtRange.contains(at)
                else { return nil }
                meta.writtenAt = at
            default:
                if literal("null") { break }
                guard let s = plainString(), let id = Identifier(canonical: UnsafeRawBufferPointer(s)) else {
                    return nil
                }
                if index == 2 { meta.causationID = id } else { meta.correlationID = id }
            }
            guard let more = memberEnd() else { return nil }
            if !more { break }
        }
        return seen & 1 == 1 ? meta : nil
    }

    /// The payload of `data`, encoded in schema order, when every field is present, valid and
    /// within the limits ``EventBatch`` checks.
    private mutating func readData(_ s: Schema, maxBodyBytes: Int) -> [UInt8]? {
        // The fields' values on the stack (an array of them was allocated and freed each line).
        withUnsafeTemporaryAllocation(of: FieldValue?.self, capacity: s.names.count) { values in
            values.initialize(repeating: nil)
            defer { values.deinitialize() }
            return readData(s, maxBodyBytes: maxBodyBytes, into: values)
        }
    }

    private mutating func readData(_ s: Schema, maxBodyBytes: Int, into values: UnsafeMutableBufferPointer<FieldValue?>)
        -> [UInt8]?
    {
        guard expect(UInt8(ascii: "{")) else { return nil }
        var count = 0
        p.skipWhitespace()
        if p.current == UInt8(ascii: "}") {
            p.index += 1
        } else {
            while true {
                guard let index = key(in: s.names, expected: count), values[index] == nil else { return nil }
                let v: FieldValue
                switch s.schema.fields[index].type {
                case .string:
                    guard let t = string() else { return nil }
                    v = .string(t)
                case .optionalString:
                    if literal("null") {
                        v = .null
                    } else {
                        guard let t = string() else { return nil }
                        v = .string(t)
                    }
                case .bool:
                    if literal("true") {
                        v = .bool(true)
                    } else if literal("false") {
                        v = .bool(false)
                    } else {
                        return nil
                    }
                case .integer:
                    guard let n = integer() else { return nil }
                    v = .integer(n.negative ? -Int64(n.magnitude) : Int64(n.magnitude))
                case .identifier:
                    guard let t = plainString(), let id = Identifier(canonical: UnsafeRawBufferPointer(t)) else {
                        return nil
                    }
                    v = .identifier(id)
                case .optionalIdentifier:
                    if literal("null") {
                        v = .null
                    } else {
                        guard let t = plainString(), let id = Identifier(canonical: UnsafeRawBufferPointer(t)) else {
                            return nil
                        }
                        v = .identifier(id)
                    }
                }
                if case .string(let text) = v,
                    !Self.withinLimits(
                        text, name: s.schema.fields[index].name, family: s.family, maxBodyBytes)
                {
                    return nil
                }
                values[index] = v
                count += 1
                guard let more = memberEnd() else { return nil }
                if !more { break }
            }
        }
        guard count == values.count else { return nil }
        var size = 0
        for v in values { if case .string(let t) = v { size += t.utf8.count + 5 } else { size += 17 } }
        var w = ByteWriter(capacity: size)
        // As ``PayloadSchema/encode(_:)`` writes them.
        for (f, v) in zip(s.schema.fields, values) {
            switch (f.type, v) {
            case (.string, .string(let t)?): w.write(string: t)
            case (.optionalString, .string(let t)?): w.write(optionalString: t)
            case (.optionalString, .null?): w.write(optionalString: nil)
            case (.bool, .bool(let x)?): w.write(bool: x)
            case (.integer, .integer(let i)?): w.write(signed: i)
            case (.identifier, .identifier(let id)?): w.write(identifier: id)
            case (.optionalIdentifier, .identifier(let id)?): w.write(optionalIdentifier: id)
            case (.optionalIdentifier, .null?): w.write(optionalIdentifier: nil)
            default: return nil
            }
        }
        return w.bytes
    }

    /// The checks of ``EventBatch`` on one string field (body size and NUL, trimmed one-line
    /// titles and category names).
    static func withinLimits(_ s: String, name: String, family: StreamFamily?, _ maxBodyBytes: Int) -> Bool {
        switch name {
        case "body", "content":
            return s.utf8.count <= maxBodyBytes && !containsNUL(s)
        case "title":
            return (try? Notebook.validTitle(s)) == s
        case "name" where family == .tag:
            return (try? Notebook.validTagName(s)) == s
        case "name":
            return (try? Notebook.validCategoryName(s)) == s
        default: return true
        }
    }
}
