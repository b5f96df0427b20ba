import Glibc

/// Why a JSON document was rejected, and at which byte.
///
/// ```swift
/// do { _ = try JSONValue.parse(Array(#"{"a":1 "b":2}"#.utf8)) } catch {
///     print(error)  // expected ',' or '}' after object member at byte 7 (found '"')
/// }
/// ```
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong.
    public enum Reason: Sendable, Equatable {
        /// The input holds nothing but whitespace.
        case emptyInput
        /// A value was expected: `{`, `[`, `"`, a number, `true`, `false` or `null`.
        case expectedValue
        /// An object key was expected (a string; a trailing comma lands here).
        case expectedKey
        /// `:` was expected after an object key.
        case expectedColon
        /// `,` or `}` was expected after an object member.
        case expectedCommaOrObjectEnd
        /// `,` or `]` was expected after an array element.
        case expectedCommaOrArrayEnd
        /// Something starting like `true`, `false` or `null` was not.
        case invalidLiteral
        /// A number broke the grammar (`-`, `1.`, `1e`, `.5`, ...).
        case invalidNumber
        /// A number had a leading zero (`01`).
        case leadingZero
        /// A string had no closing quote; the offset is its opening quote.
        case unterminatedString
        /// A string held a raw byte below 0x20, which JSON requires to be escaped.
        case controlCharacterInString
        /// A backslash was followed by something other than `"\/bfnrtu`.
        case invalidEscape
        /// `\u` was not followed by four hex digits.
        case invalidUnicodeEscape
        /// A `\u` escape named half of a UTF-16 surrogate pair without the other half.
        case unpairedSurrogate
        /// A string's bytes are not well-formed UTF-8.
        case invalidUTF8
        /// An object has the same key twice; the offset is the second one.
        case duplicateKey(String)
        /// Arrays and objects nest deeper than the limit.
        case tooDeep(limit: Int)
        /// Something other than whitespace follows the document's value.
        case trailingCharacters

        var message: String {
            switch self {
            case .emptyInput: "empty document"
            case .expectedValue: "expected a value"
            case .expectedKey: "expected a string key"
            case .expectedColon: "expected ':' after object key"
            case .expectedCommaOrObjectEnd: "expected ',' or '}' after object member"
            case .expectedCommaOrArrayEnd: "expected ',' or ']' after array element"
            case .invalidLiteral: "invalid literal (expected true, false or null)"
            case .invalidNumber: "invalid number: expected a digit"
            case .leadingZero: "leading zeros are not allowed in numbers"
            case .unterminatedString: "unterminated string"
            case .controlCharacterInString: "unescaped control character in string"
            case .invalidEscape: "invalid escape sequence in string"
            case .invalidUnicodeEscape: "invalid \\u escape (expected 4 hex digits)"
            case .unpairedSurrogate: "unpaired UTF-16 surrogate in \\u escape"
            case .invalidUTF8: "invalid UTF-8 in string"
            case .duplicateKey(let key): "duplicate key \"\(key)\""
            case .tooDeep(let limit): "arrays and objects nested deeper than \(limit) levels"
            case .trailingCharacters: "unexpected characters after the JSON value"
            }
        }

        /// Whether naming the byte found at the offset helps the reader.
        var namesFoundByte: Bool {
            switch self {
            case .emptyInput, .unterminatedString, .duplicateKey, .tooDeep, .invalidUTF8: false
            default: true
            }
        }
    }

    /// What was wrong.
    public let reason: Reason
    /// Zero-based byte offset into the input where the problem was found.
    public let offset: Int
    /// The byte at ``offset``, or `nil` when the input ended there.
    public let found: UInt8?

    /// Creates an error; parsers and tests use this.
    public init(_ reason: Reason, at offset: Int, found: UInt8?) {
        self.reason = reason
        self.offset = offset
        self.found = found
    }

    /// A one-line message such as `expected ':' after object key at byte 5 (found '1')`.
    public var description: String {
        var text = "\(reason.message) at byte \(offset)"
        guard reason.namesFoundByte else { return text }
        guard let found else { return text + " (found end of input)" }
        if found >= 0x21 && found < 0x7F {
            text += " (found '\(Character(Unicode.Scalar(found)))')"
        } else {
            text += " (found byte 0x\(String(found, radix: 16, uppercase: true)))"
        }
        return text
    }
}

extension JSONValue {
    /// The default limit on nested arrays and objects: deep enough for any real document, shallow
    /// enough that the recursive parser cannot exhaust a thread's stack.
    public static let defaultMaxDepth = 512

    /// Parses one JSON document (strict RFC 8259: no comments, trailing commas, leading zeros,
    /// NaN, byte order mark, invalid UTF-8, unpaired surrogates or duplicate keys).
    ///
    /// - Throws: ``JSONError`` naming the first problem and its byte offset.
    public static func parse(
        _ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth
    ) throws(JSONError) -> JSONValue {
        var parser = JSONScanner(bytes.assumingMemoryBound(to: UInt8.self), maxDepth: maxDepth)
        return try parser.parseDocument()
    }

    /// Parses one JSON document from any byte collection (`[UInt8]`, `ArraySlice<UInt8>`, ...).
    ///
    /// - Throws: ``JSONError`` naming the first problem and its byte offset.
    public static func parse(
        _ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth
    ) throws(JSONError) -> JSONValue {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONError) -> JSONValue in
                var parser = JSONScanner(buffer, maxDepth: maxDepth)
                return try parser.parseDocument()
            }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try parse(copy, maxDepth: maxDepth)
    }

    /// Parses one JSON document from its text.
    ///
    /// - Throws: ``JSONError`` naming the first problem and its UTF-8 byte offset.
    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONError) -> JSONValue in
                var parser = JSONScanner(buffer, maxDepth: maxDepth)
                return try parser.parseDocument()
            }
        }
        return try result.get()
    }
}

/// The project's one JSON reader: a pull scanner over a contiguous byte buffer. Every read is
/// bounds-checked against `end`, and nesting is bounded by `maxDepth`, so no input can trap it.
///
/// ``JSONValue/parse(_:maxDepth:)`` builds a tree of values with it. A reader of one fixed
/// shape of document (the import's event lines) pulls tokens itself (``consume(_:)``,
/// ``memberEnd()``, ``plainString()``, ``literal(_:)``, ``integer()``, ``parseString()``), so
/// its strings get exactly the checks of the tree's without a tree being built; each of these
/// returns nil (or false) for anything it does not read, and the reader can then fall back to
/// the tree and its error messages.
///
/// ```swift
/// var scanner = JSONScanner(bytes)
/// guard scanner.consume(UInt8(ascii: "{")), let key = scanner.plainString() else { ... }
/// ```
public struct JSONScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let end: Int
    private let maxDepth: Int
    /// The offset of the next byte to read.
    public var index = 0
    private var depth = 0
    /// Reused for strings with escapes, so each such string costs one copy, not a new buffer.
    private var scratch: [UInt8] = []

    public init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONValue.defaultMaxDepth) {
        self.bytes = bytes
        self.end = bytes.count
        self.maxDepth = maxDepth
    }

    // MARK: Tokens

    /// The byte at ``index``, or nil at the end.
    public var current: UInt8? { index < end ? bytes[index] : nil }

    /// Skips white space, then `byte` if it is next.
    public mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard current == byte else { return false }
        index += 1
        return true
    }

    /// After an object member: true for `,` (another follows), false for `}`, nil otherwise.
    public mutating func memberEnd() -> Bool? {
        skipWhitespace()
        switch current {
        case UInt8(ascii: ","):
            index += 1
            return true
        case UInt8(ascii: "}"):
            index += 1
            return false
        default: return nil
        }
    }

    /// Skips white space, then the string whose text is `text` (printable ASCII without `"` or
    /// `\`), written without escapes, if it is next: what ``plainString()`` reads when it gives
    /// those bytes, for an object's key read in its usual place, without scanning for its end.
    public mutating func consumePlainString(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        skipWhitespace()
        let n = text.count
        guard let base = bytes.baseAddress, let t = text.baseAddress, end - index >= n &+ 2,
            base[index] == UInt8(ascii: "\""), base[index &+ n &+ 1] == UInt8(ascii: "\""),
            memcmp(base + (index &+ 1), t, n) == 0
        else { return false }
        index &+= n &+ 2
        return true
    }

    /// A string of printable ASCII without escapes, as the bytes between its quotes (then they
    /// are exactly its decoded text); nil, reading nothing, for any other value.
    public mutating func plainString() -> UnsafeBufferPointer<UInt8>? {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var i = skipPlain(from: start)
        while i < end {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                index = i + 1
                return UnsafeBufferPointer(rebasing: bytes[start..<i])
            }
            guard c >= 0x20, c < 0x80, c != UInt8(ascii: "\\") else { return nil }
            i += 1
        }
        return nil
    }

    /// Any valid string, decoded; nil for anything else.
    public mutating func string() -> String? {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else { return nil }
        return try? parseString()
    }

    /// How many bytes of `word` follow from ``index``.
    private func matching(_ word: StaticString) -> Int {
        let n = word.utf8CodeUnitCount
        let w = UnsafeBufferPointer(start: word.utf8Start, count: n)
        var k = 0
        while k < n, index + k < end, bytes[index + k] == w[k] { k += 1 }
        return k
    }

    /// Skips white space, then `word` (`true`, `false`, `null`) if it is next.
    public mutating func literal(_ word: StaticString) -> Bool {
        skipWhitespace()
        guard matching(word) == word.utf8CodeUnitCount else { return false }
        index += word.utf8CodeUnitCount
        return true
    }

    /// An integer literal (`-`? digits, no leading zero, no fraction or exponent) whose
    /// magnitude has at most 18 digits: its sign and magnitude; nil, reading nothing, otherwise.
    public mutating func integer() -> (negative: Bool, magnitude: UInt64)? {
        skipWhitespace()
        var i = index
        let negative = i < end && bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let start = i
        var value: UInt64 = 0
        while i < end, bytes[i] &- UInt8(ascii: "0") < 10 {
            value = value &* 10 &+ UInt64(bytes[i] &- UInt8(ascii: "0"))
            i += 1
        }
        let digits = i - start
        guard digits >= 1, digits <= 18, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        if i < end, bytes[i] == UInt8(ascii: ".") || bytes[i] | 0x20 == UInt8(ascii: "e") { return nil }
        index = i
        return (negative, value)
    }

    // MARK: The tree

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        skipWhitespace()
        guard index < end else { throw error(.emptyInput) }
        let value = try parseValue()
        skipWhitespace()
        guard index == end else { throw error(.trailingCharacters) }
        return value
    }

    private func error(_ reason: JSONError.Reason, at offset: Int? = nil) -> JSONError {
        let offset = offset ?? index
        return JSONError(reason, at: offset, found: offset < end ? bytes[offset] : nil)
    }

    public mutating func skipWhitespace() {
        while index < end {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONError) -> JSONValue {
        guard let byte = current else { throw error(.expectedValue) }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error(.expectedValue)
        }
    }

    private mutating func parseLiteral(_ word: StaticString, _ value: JSONValue) throws(JSONError) -> JSONValue {
        let matched = matching(word)
        guard matched == word.utf8CodeUnitCount else { throw error(.invalidLiteral, at: index + matched) }
        index += matched
        return value
    }

    private mutating func enterContainer() throws(JSONError) {
        depth += 1
        guard depth <= maxDepth else { throw error(.tooDeep(limit: maxDepth)) }
        index += 1
        skipWhitespace()
    }

    private mutating func parseArray() throws(JSONError) -> JSONValue {
        try enterContainer()
        var elements: [JSONValue] = []
        if current == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(elements)
            default:
                throw error(.expectedCommaOrArrayEnd)
            }
        }
    }

    private mutating func parseObject() throws(JSONError) -> JSONValue {
        try enterContainer()
        var members: [(key: String, value: JSONValue)] = []
        if current == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        // Small objects are checked for duplicates by a scan; a set takes over for big ones.
        var seen: Set<String>? = nil
        while true {
            guard current == UInt8(ascii: "\"") else { throw error(.expectedKey) }
            let keyOffset = index
            let key = try parseString()
            if var set = seen {
                guard set.insert(key).inserted else { throw error(.duplicateKey(key), at: keyOffset) }
                seen = set
            } else {
                for member in members where member.key == key {
                    throw error(.duplicateKey(key), at: keyOffset)
                }
                if members.count >= 16 {
                    seen = Set(members.map(\.key) + [key])
                }
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error(.expectedColon) }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            members.append((key: key, value: value))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(members)
            default:
                throw error(.expectedCommaOrObjectEnd)
            }
        }
    }

    private mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = index
        var i = start
        func isDigit(_ i: Int) -> Bool { i < end && bytes[i] &- UInt8(ascii: "0") < 10 }
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard isDigit(i) else { throw error(.invalidNumber, at: i) }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
            if isDigit(i) { throw error(.leadingZero, at: i - 1) }
        } else {
            while isDigit(i) { i += 1 }
        }
        if i < end, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard isDigit(i) else { throw error(.invalidNumber, at: i) }
            while isDigit(i) { i += 1 }
        }
        if i < end, bytes[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < end, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard isDigit(i) else { throw error(.invalidNumber, at: i) }
            while isDigit(i) { i += 1 }
        }
        index = i
        let literal = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        return .number(JSONNumber(validatedLiteral: literal))
    }

    /// Parses the string whose opening quote is at `index`. The common case (no escapes) is
    /// validated in place and copied once; escapes switch to decoding into `scratch`.
    public mutating func parseString() throws(JSONError) -> String {
        let quote = index
        let start = quote + 1
        var i = start
        while true {
            i = skipPlain(from: i)
            guard i < end else { throw error(.unterminatedString, at: quote) }
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                index = i + 1
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                break
            } else if byte < 0x20 {
                throw error(.controlCharacterInString, at: i)
            } else if byte < 0x80 {
                i += 1
            } else {
                i += try utf8SequenceLength(at: i)
            }
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i]))
        while true {
            guard i < end else { throw error(.unterminatedString, at: quote) }
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                index = i + 1
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                i = try decodeEscape(at: i)
            } else if byte < 0x20 {
                throw error(.controlCharacterInString, at: i)
            } else if byte < 0x80 {
                // The run of plain bytes from here at once (a body's lines between its `\n`
                // escapes): a byte at a time, each append checked the buffer's uniqueness.
                var j = skipPlain(from: i &+ 1)
                while j < end, bytes[j] >= 0x20, bytes[j] < 0x80, bytes[j] != UInt8(ascii: "\""),
                    bytes[j] != UInt8(ascii: "\\")
                {
                    j &+= 1
                }
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[i..<j]))
                i = j
            } else {
                let length = try utf8SequenceLength(at: i)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[i..<(i + length)]))
                i += length
            }
        }
    }

    /// The first offset from `i` (or `end`) that may hold a quote, a backslash, a control
    /// character or a non-ASCII byte, skipping eight plain bytes at a time. The bytes it skips
    /// are printable ASCII other than the quote and the backslash: a string holds them as they are.
    func skipPlain(from i: Int) -> Int {
        guard let base = bytes.baseAddress, i >= 0 else { return i }
        var i = i
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while i &+ 8 <= end {
            let x = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            // A byte is zero in `v` exactly when `(v - 1) & ~v` has its high bit (the first such
            // byte is exact; later flags may be spurious, which only stops the skip early).
            let quote = x ^ (ones &* 0x22)
            let backslash = x ^ (ones &* 0x5C)
            let zeroQuote = (quote &- ones) & ~quote
            let zeroBackslash = (backslash &- ones) & ~backslash
            // Below 0x20: subtracting 0x20 borrows into the high bit of a byte below it.
            let low = (x &- ones &* 0x20) & ~x
            if (zeroQuote | zeroBackslash | low | x) & highs != 0 { break }
            i &+= 8
        }
        return i
    }

    /// Decodes the escape whose backslash is at `i` into `scratch`; returns the index after it.
    private mutating func decodeEscape(at i: Int) throws(JSONError) -> Int {
        guard i + 1 < end else { throw error(.invalidEscape, at: i + 1) }
        let decoded: UInt8
        switch bytes[i + 1] {
        case UInt8(ascii: "\""): decoded = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): decoded = UInt8(ascii: "\\")
        case UInt8(ascii: "/"): decoded = UInt8(ascii: "/")
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = 0x0A
        case UInt8(ascii: "r"): decoded = 0x0D
        case UInt8(ascii: "t"): decoded = 0x09
        case UInt8(ascii: "u"): return try decodeUnicodeEscape(at: i)
        default: throw error(.invalidEscape, at: i + 1)
        }
        scratch.append(decoded)
        return i + 2
    }

    private func hexQuad(at i: Int) throws(JSONError) -> UInt32 {
        var value: UInt32 = 0
        for j in i..<(i + 4) {
            guard j < end else { throw error(.invalidUnicodeEscape, at: j) }
            let byte = bytes[j]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
            default: throw error(.invalidUnicodeEscape, at: j)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Decodes `\uXXXX` (and its low surrogate partner, if it is a high surrogate) at `i`.
    private mutating func decodeUnicodeEscape(at i: Int) throws(JSONError) -> Int {
        let unit = try hexQuad(at: i + 2)
        var next = i + 6
        var scalarValue = unit
        if unit >= 0xD800 && unit <= 0xDBFF {
            guard next + 1 < end, bytes[next] == UInt8(ascii: "\\"), bytes[next + 1] == UInt8(ascii: "u")
            else { throw error(.unpairedSurrogate, at: i) }
            let low = try hexQuad(at: next + 2)
            guard low >= 0xDC00 && low <= 0xDFFF else { throw error(.unpairedSurrogate, at: i) }
            scalarValue = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            next += 6
        } else if unit >= 0xDC00 && unit <= 0xDFFF {
            throw error(.unpairedSurrogate, at: i)
        }
        appendUTF8(scalarValue)
        return next
    }

    /// Appends the UTF-8 form of a scalar value already known to be valid (not a surrogate).
    private mutating func appendUTF8(_ value: UInt32) {
        switch value {
        case ..<0x80:
            scratch.append(UInt8(truncatingIfNeeded: value))
        case ..<0x800:
            scratch.append(0xC0 | UInt8(truncatingIfNeeded: value >> 6))
            scratch.append(0x80 | UInt8(truncatingIfNeeded: value) & 0x3F)
        case ..<0x10000:
            scratch.append(0xE0 | UInt8(truncatingIfNeeded: value >> 12))
            scratch.append(0x80 | UInt8(truncatingIfNeeded: value >> 6) & 0x3F)
            scratch.append(0x80 | UInt8(truncatingIfNeeded: value) & 0x3F)
        default:
            scratch.append(0xF0 | UInt8(truncatingIfNeeded: value >> 18))
            scratch.append(0x80 | UInt8(truncatingIfNeeded: value >> 12) & 0x3F)
            scratch.append(0x80 | UInt8(truncatingIfNeeded: value >> 6) & 0x3F)
            scratch.append(0x80 | UInt8(truncatingIfNeeded: value) & 0x3F)
        }
    }

    /// The length of the well-formed UTF-8 sequence whose lead byte (>= 0x80) is at `i`
    /// (Unicode Table 3-7: no overlongs, no surrogates, nothing above U+10FFFF).
    private func utf8SequenceLength(at i: Int) throws(JSONError) -> Int {
        let lead = bytes[i]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, low) = (3, 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, high) = (3, 0x9F)
        case 0xF0: (length, low) = (4, 0x90)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, high) = (4, 0x8F)
        default: throw error(.invalidUTF8, at: i)
        }
        guard i + length <= end else { throw error(.invalidUTF8, at: i) }
        let second = bytes[i + 1]
        guard second >= low && second <= high else { throw error(.invalidUTF8, at: i) }
        for j in (i + 2)..<(i + length) where bytes[j] & 0xC0 != 0x80 {
            throw error(.invalidUTF8, at: i)
        }
        return length
    }
}
