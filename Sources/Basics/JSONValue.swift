/// A JSON document (RFC 8259) as a tree of values.
///
/// Objects keep their members in document order, so an imported line re-exports to the same bytes.
/// Numbers keep their literal text (see ``JSONNumber``), so integers stay exact whatever their size.
///
/// ```swift
/// let line = JSONValue.object([("id", .string("n1")), ("pinned", .bool(true)), ("rev", .int(3))])
/// line.serialized()                 // {"id":"n1","pinned":true,"rev":3}
/// try JSONValue.parse(Array(#"{"a":[1,null]}"#.utf8))["a"]?[0]?.int64Value  // 1
/// ```
public enum JSONValue: Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept as its validated literal text.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; members in document order. The parser never produces duplicate keys.
    case object([(key: String, value: JSONValue)])
}

// Tuples are not Equatable, so the members are compared by hand.
extension JSONValue: Equatable {
    /// Structural equality: objects are equal when they have the same members in the same order,
    /// numbers when their literal text is the same (`1` and `1.0` differ).
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for (x, y) in zip(a, b) where x.key != y.key || x.value != y.value {
                return false
            }
            return true
        default: return false
        }
    }
}

// MARK: - Building values

extension JSONValue {
    /// An integer number.
    public static func int(_ value: Int64) -> JSONValue { .number(JSONNumber(value)) }

    /// An integer number.
    public static func int(_ value: Int) -> JSONValue { .number(JSONNumber(Int64(value))) }

    /// An unsigned integer number.
    public static func uint(_ value: UInt64) -> JSONValue { .number(JSONNumber(value)) }

    /// A floating-point number in its shortest round-trip form; NaN and infinities, which JSON
    /// cannot express, become `null` (as in JavaScript's `JSON.stringify`).
    public static func double(_ value: Double) -> JSONValue {
        guard let number = JSONNumber(value) else { return .null }
        return .number(number)
    }
}

extension JSONValue: ExpressibleByNilLiteral {
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// A boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// An integer number.
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// A floating-point number (see ``double(_:)``).
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// An object with the members in the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(elements.map { (key: $0.0, value: $0.1) })
    }
}

// MARK: - Reading values

extension JSONValue {
    /// The value of the member named `key` when this is an object that has one, else `nil`.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for member in members where member.key == key {
            return member.value
        }
        return nil
    }

    /// The element at `index` when this is an array and `index` is in bounds, else `nil`.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The boolean, when this is `true` or `false`.
    public var boolValue: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    /// The number, when this is a number.
    public var numberValue: JSONNumber? {
        guard case .number(let value) = self else { return nil }
        return value
    }

    /// The exact integer, when this is an integer literal that fits (see ``JSONNumber/int64Value``).
    public var int64Value: Int64? { numberValue?.int64Value }

    /// The exact integer, when this is a non-negative integer literal that fits in a `UInt64`.
    public var uint64Value: UInt64? { numberValue?.uint64Value }

    /// The nearest `Double`, when this is a number.
    public var doubleValue: Double? { numberValue?.doubleValue }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        guard case .array(let value) = self else { return nil }
        return value
    }

    /// The members in order, when this is an object.
    public var objectValue: [(key: String, value: JSONValue)]? {
        guard case .object(let value) = self else { return nil }
        return value
    }
}

// MARK: - Numbers

/// A JSON number, kept as its literal text so that nothing is lost between import and export.
///
/// The text always satisfies the RFC 8259 number grammar: every initializer validates it.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The literal as it appears in the document, e.g. `-12`, `0.5`, `1e+20`.
    public let literal: String

    /// Whether the literal has no fraction and no exponent.
    public var isInteger: Bool {
        !literal.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") })
    }

    /// The literal text.
    public var description: String { literal }

    /// Wraps text the parser has already validated.
    init(validatedLiteral: String) { literal = validatedLiteral }

    /// A number with `literal` as its text, or `nil` when it is not a JSON number
    /// (`01`, `+1`, `.5`, `1.`, `NaN`, ...).
    public init?(literal: String) {
        var text = literal
        let valid = text.withUTF8 { JSONNumber.isValidLiteral($0) }
        guard valid else { return nil }
        self.literal = literal
    }

    /// An integer.
    public init(_ value: Int64) { literal = String(value) }

    /// An unsigned integer.
    public init(_ value: UInt64) { literal = String(value) }

    /// A finite double in Swift's shortest round-trip form; `nil` for NaN and infinities.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        // Swift renders finite doubles as `1.0`, `-0.0`, `1e-05`, `1.5e+300`: all valid JSON.
        literal = value.description
    }

    /// The exact value when the literal is an integer (no fraction, no exponent) within `Int64`;
    /// `nil` otherwise, so a caller never gets a silently rounded or truncated value.
    public var int64Value: Int64? {
        var text = literal
        return text.withUTF8 { bytes -> Int64? in
            guard let first = bytes.first else { return nil }
            let negative = first == UInt8(ascii: "-")
            guard let magnitude = JSONNumber.integerMagnitude(bytes, from: negative ? 1 : 0) else {
                return nil
            }
            if negative {
                if magnitude == UInt64(Int64.max) + 1 { return Int64.min }
                guard magnitude <= UInt64(Int64.max) else { return nil }
                return -Int64(magnitude)
            }
            guard magnitude <= UInt64(Int64.max) else { return nil }
            return Int64(magnitude)
        }
    }

    /// The exact value when the literal is a non-negative integer within `UInt64` (`-0` is 0).
    public var uint64Value: UInt64? {
        var text = literal
        return text.withUTF8 { bytes -> UInt64? in
            guard let first = bytes.first else { return nil }
            if first == UInt8(ascii: "-") {
                return JSONNumber.integerMagnitude(bytes, from: 1) == 0 ? 0 : nil
            }
            return JSONNumber.integerMagnitude(bytes, from: 0)
        }
    }

    /// The nearest double (correctly rounded); huge exponents give infinity, tiny ones zero.
    public var doubleValue: Double {
        // The grammar is a subset of what `Double(_:)` accepts, so this only fails on a bug.
        Double(literal) ?? .nan
    }

    /// Digits from `start` to the end as an unsigned integer; `nil` on any non-digit or overflow.
    private static func integerMagnitude(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> UInt64? {
        guard start < bytes.count else { return nil }
        var result: UInt64 = 0
        for index in start..<bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(UInt64(digit))
            guard !overflow1, !overflow2 else { return nil }
            result = sum
        }
        return result
    }

    /// Whether `bytes` is exactly one number per the RFC 8259 grammar.
    static func isValidLiteral(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let end = numberEnd(bytes, from: 0) else { return false }
        return end == bytes.count
    }

    /// The end of the number that starts at `start`, or `nil` when the grammar is violated there.
    /// Shared by ``init(literal:)`` and the parser (which reports a more precise reason itself).
    static func numberEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        let n = bytes.count
        func isDigit(_ i: Int) -> Bool { i < n && bytes[i] &- UInt8(ascii: "0") < 10 }
        if i < n, bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard isDigit(i) else { return nil }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
            if isDigit(i) { return nil }
        } else {
            while isDigit(i) { i += 1 }
        }
        if i < n, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard isDigit(i) else { return nil }
            while isDigit(i) { i += 1 }
        }
        if i < n, bytes[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < n, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard isDigit(i) else { return nil }
            while isDigit(i) { i += 1 }
        }
        return i
    }
}
