extension JSONValue {
    /// The JSON text of this value.
    ///
    /// Compact form has no whitespace at all (`{"a":1,"b":[true,null]}`); pretty form indents by two
    /// spaces and writes `": "` between key and value. Both are deterministic: members keep their
    /// order, numbers keep their literal text, and strings escape only `"`, `\` and control
    /// characters (non-ASCII stays UTF-8).
    public func serialized(pretty: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
    }

    /// The UTF-8 bytes of ``serialized(pretty:)``.
    public func serializedBytes(pretty: Bool = false) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(to: &output, pretty: pretty)
        return output
    }

    /// Appends the JSON text of this value to `output`; the fast path for writing many lines
    /// into one buffer.
    public func write(to output: inout [UInt8], pretty: Bool = false) {
        if pretty {
            JSONWriter.writePretty(self, to: &output, level: 0)
        } else {
            JSONWriter.writeCompact(self, to: &output)
        }
    }
}

extension String {
    /// This string as a JSON string literal, quotes included: `"say \"hi\"\n"`.
    public var jsonQuoted: String {
        var output: [UInt8] = []
        output.reserveCapacity(utf8.count + 2)
        JSONWriter.writeString(self, to: &output)
        return String(decoding: output, as: UTF8.self)
    }
}

enum JSONWriter {
    static func writeCompact(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .null: appendASCII("null", to: &output)
        case .bool(let flag): appendASCII(flag ? "true" : "false", to: &output)
        case .number(let number): output.append(contentsOf: number.literal.utf8)
        case .string(let string): writeString(string, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                writeCompact(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (position, member) in members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                writeString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                writeCompact(member.value, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    static func writePretty(_ value: JSONValue, to output: inout [UInt8], level: Int) {
        switch value {
        case .array(let elements) where !elements.isEmpty:
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                newline(level + 1, to: &output)
                writePretty(element, to: &output, level: level + 1)
            }
            newline(level, to: &output)
            output.append(UInt8(ascii: "]"))
        case .object(let members) where !members.isEmpty:
            output.append(UInt8(ascii: "{"))
            for (position, member) in members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                newline(level + 1, to: &output)
                writeString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                output.append(UInt8(ascii: " "))
                writePretty(member.value, to: &output, level: level + 1)
            }
            newline(level, to: &output)
            output.append(UInt8(ascii: "}"))
        default:
            writeCompact(value, to: &output)
        }
    }

    private static func newline(_ level: Int, to output: inout [UInt8]) {
        output.append(0x0A)
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    private static func appendASCII(_ text: StaticString, to output: inout [UInt8]) {
        output.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    /// Writes a quoted string, copying runs that need no escaping in bulk.
    static func writeString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x09: output.append(UInt8(ascii: "t"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                default:
                    let hex = UnsafeBufferPointer(start: hexDigits.utf8Start, count: 16)
                    output.append(UInt8(ascii: "u"))
                    output.append(UInt8(ascii: "0"))
                    output.append(UInt8(ascii: "0"))
                    output.append(hex[Int(byte >> 4)])
                    output.append(hex[Int(byte & 0xF)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        output.append(UInt8(ascii: "\""))
    }
}
