public import EventStore
import Glibc

/// The event interchange format: JSON Lines, one event per line, oldest first.
///
/// ```json
/// {"position":17,"eventId":"0b9c…","stream":"note/5f1e…","version":3,"type":"NoteBodyEdited",
///  "schemaVersion":1,"recordedAt":"2026-11-29T12:00:00.123456Z","metadata":{"actor":"ana@laptop"},
///  "data":{"body":"…"}}
/// ```
///
/// Keys come in this order; `metadata` holds `actor` and, only when present, `command`,
/// `causationId` and `correlationId`; `data` holds the payload's fields by name in schema
/// order (ids as canonical UUID strings, `null` for an absent optional). The writer is
/// deterministic, so exporting the same events always gives the same bytes.
public enum EventLine {
    /// Appends the line of one event, newline included, to `output`.
    public static func write(
        position: UInt64, id: Identifier, stream: String, version: UInt64, type: String, schemaVersion: UInt32,
        recordedAt: Int64, metadata: EventMetadata, data: EventFields, to output: inout [UInt8]
    ) {
        var meta: [(key: String, value: JSONValue)] = [("actor", .string(metadata.actor))]
        if let c = metadata.command { meta.append(("command", .string(c))) }
        if let c = metadata.causationID { meta.append(("causationId", .string(UUIDText.format(c)))) }
        if let c = metadata.correlationID { meta.append(("correlationId", .string(UUIDText.format(c)))) }
        let line = JSONValue.object([
            ("position", .uint(position)),
            ("eventId", .string(UUIDText.format(id))),
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
        case .identifier(let id): return .string(UUIDText.format(id))
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
    public var description: String { "line \(line): \(reason); nothing was imported" }
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

    public init(registry: SchemaRegistry = NotesSchema.registry, maxBodyBytes: Int = 1 << 20) {
        self.registry = registry
        self.maxBodyBytes = maxBodyBytes
    }

    /// Parses and validates the next line (without its newline). Blank lines are skipped.
    public mutating func add(line bytes: UnsafeRawBufferPointer) throws(InterchangeError) {
        lineCount += 1
        let n = lineCount
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
        let value: JSONValue
        do { value = try JSONValue.parse(bytes) } catch {
            if error.reason == .invalidUTF8 {
                throw InterchangeError(line: n, "invalid UTF-8 at byte \(error.offset)")
            }
            throw InterchangeError(line: n, "malformed JSON: \(error)")
        }
        let event: ImportedEvent
        do { event = try parse(value, line: n) } catch { throw InterchangeError(line: n, error.message) }
        if let first = firstLine[event.event.id] {
            throw InterchangeError(
                line: n, "event id \(event.event.id) appears twice in the file (first on line \(first))")
        }
        firstLine[event.event.id] = n
        events.append(event)
    }

    /// ``add(line:)`` for any byte collection.
    public mutating func add(line: some Collection<UInt8>) throws(InterchangeError) {
        let bytes = Array(line)
        let result: Result<Void, InterchangeError> = bytes.withUnsafeBytes { b in
            Result { () throws(InterchangeError) in try add(line: b) }
        }
        try result.get()
    }

    struct Problem: Error { let message: String }

    private func parse(_ value: JSONValue, line: Int) throws(Problem) -> ImportedEvent {
        guard let members = value.objectValue else { throw Problem(message: "expected a JSON object") }
        for m in members where !EventLine.keys.contains(m.key) {
            throw Problem(message: "unknown key \"\(m.key)\"")
        }
        if let p = value["position"], p.uint64Value == nil {
            throw Problem(message: "\"position\" must be a whole number")
        }
        let idText = try string(value, "eventId")
        guard let id = UUIDText.parse(idText) else {
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
        let isCategoryType = type.hasPrefix("Category")
        guard isCategoryType == (kind == .category) else {
            throw Problem(message: "\(type) does not belong in stream \(stream)")
        }
        let creates = type == "NoteCreated" || type == "CategoryCreated"
        if creates != (version == 1) {
            throw Problem(
                message: creates
                    ? "\(type) must be version 1 of its stream, not \(version)"
                    : "version 1 of \(stream) must be a \(isCategoryType ? "CategoryCreated" : "NoteCreated") event, not \(type)"
            )
        }
        let recordedText = try string(value, "recordedAt")
        guard let recordedAt = RFC3339.parse(recordedText) else {
            throw Problem(message: "recordedAt \(recordedText.jsonQuoted) is not an RFC 3339 instant")
        }
        let metadata = try Self.metadata(value["metadata"])
        guard let data = value["data"] else { throw Problem(message: "missing key \"data\"") }
        let fields = try Self.fields(data, schema: schema)
        try check(fields)
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

    enum StreamKind { case note, category }

    /// `note/UUID` or `category/UUID`, the UUID in canonical lowercase form.
    static func streamKind(_ stream: String) throws(Problem) -> StreamKind {
        for (prefix, kind) in [("note/", StreamKind.note), ("category/", .category)] where stream.hasPrefix(prefix) {
            // Canonical lower case only: the stream name is the key the store looks it up by.
            var name = stream
            let valid = name.withUTF8 { bytes in
                UUIDText.parse(UnsafeBufferPointer(rebasing: bytes[prefix.utf8.count...]), lowercaseOnly: true) != nil
            }
            if valid { return kind }
        }
        throw Problem(message: "stream \(stream.jsonQuoted) is not note/UUID or category/UUID (lowercase UUID)")
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
                guard let s = m.value.stringValue, let id = UUIDText.parse(s) else {
                    throw Problem(message: "metadata.\(m.key) must be a UUID or null")
                }
                if m.key == "causationId" { meta.causationID = id } else { meta.correlationID = id }
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
                v = UUIDText.parse(s).map(FieldValue.identifier)
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

    /// The limits every command enforces: bodies within the limit and free of NUL, titles and
    /// category names as ``Notebook`` stores them (trimmed, one line, within their lengths).
    private func check(_ fields: EventFields) throws(Problem) {
        for (name, value) in fields.pairs {
            guard case .string(let s) = value else { continue }
            switch name {
            case "body", "content":
                let size = s.utf8.count
                if size > maxBodyBytes {
                    throw Problem(message: "the body is \(size) bytes; the limit is \(maxBodyBytes)")
                }
                if containsNUL(s) { throw Problem(message: "the body contains a NUL character") }
            case "title":
                let valid: String
                do { valid = try Notebook.validTitle(s) } catch { throw Problem(message: error.description) }
                guard valid == s else { throw Problem(message: "the title has leading or trailing white space") }
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

/// Whether the text holds a NUL, which notes refuse (memchr over the UTF-8 bytes).
func containsNUL(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { bytes in
        guard let base = bytes.baseAddress else { return false }
        return memchr(base, 0, bytes.count) != nil
    }
}
