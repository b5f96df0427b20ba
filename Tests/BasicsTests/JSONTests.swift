import EventStore
import TestSupport
import Testing

@testable import Basics

@Suite("JSON")
struct JSONTests {
    private static func parse(_ text: String) throws(JSONError) -> JSONValue {
        try JSONValue.parse(Array(text.utf8))
    }

    // MARK: Parsing

    @Test("parses every kind of value and keeps member order")
    func parsesValues() throws {
        let value = try Self.parse(
            #" { "z" : 1, "a" : [ true , false , null , -0.5e+10 , "x" ] , "m" : { } , "e" : [ ] } "#)
        #expect(value.objectValue?.map(\.key) == ["z", "a", "m", "e"])
        #expect(value["z"]?.int64Value == 1)
        #expect(value["a"]?[0]?.boolValue == true)
        #expect(value["a"]?[1]?.boolValue == false)
        #expect(value["a"]?[2]?.isNull == true)
        #expect(value["a"]?[3]?.numberValue?.literal == "-0.5e+10")
        #expect(value["a"]?[3]?.doubleValue == -0.5e10)
        #expect(value["a"]?[4]?.stringValue == "x")
        #expect(value["a"]?[5] == nil)
        #expect(value["a"]?[-1] == nil)
        #expect(value["m"] == .object([]))
        #expect(value["e"] == .array([]))
        #expect(value["missing"] == nil)
        #expect(value["z"]?["x"] == nil)
        #expect(value.serialized() == #"{"z":1,"a":[true,false,null,-0.5e+10,"x"],"m":{},"e":[]}"#)
    }

    @Test("scalars at the top level")
    func topLevelScalars() throws {
        #expect(try Self.parse("null") == .null)
        #expect(try Self.parse(" true\n") == .bool(true))
        #expect(try Self.parse("\t-12\r\n") == .int(-12))
        #expect(try Self.parse(#""hi""#) == .string("hi"))
        #expect(try Self.parse("0") == .int(0))
        #expect(try Self.parse("-0").int64Value == 0)
    }

    @Test("string escapes decode, including surrogate pairs")
    func escapes() throws {
        let value = try Self.parse(#""a\"b\\c\/d\be\ff\ng\rh\ti\u00e9\u20AC\ud83d\ude00\u0000""#)
        #expect(value.stringValue == "a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti\u{e9}\u{20ac}\u{1F600}\u{0}")
        #expect(try Self.parse(#""\uDBFF\uDFFF""#).stringValue == "\u{10FFFF}")
        #expect(try Self.parse(#""\u0041x""#).stringValue == "Ax")
    }

    @Test("well-formed UTF-8 is accepted in strings and keys")
    func validUTF8() throws {
        let sequences: [[UInt8]] = [
            [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xEF, 0xBF, 0xBF],
            [0xF4, 0x8F, 0xBF, 0xBF], [0xED, 0x9F, 0xBF], [0xE0, 0xA0, 0x80], [0xF0, 0x90, 0x80, 0x80],
        ]
        for sequence in sequences {
            let expected = String(decoding: sequence, as: UTF8.self)
            #expect(try JSONValue.parse([0x22] + sequence + [0x22]) == .string(expected))
            // The same bytes after an escape take the slower decoding path.
            #expect(try JSONValue.parse([0x22, 0x5C, 0x6E] + sequence + [0x22]) == .string("\n" + expected))
            let object = try JSONValue.parse([0x7B, 0x22] + sequence + Array(#"":1}"#.utf8))
            #expect(object[expected]?.int64Value == 1)
        }
    }

    @Test(
        "ill-formed UTF-8 is rejected where it starts",
        arguments: [
            [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF],
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFE], [0xFF],
            [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC3, 0x41], [0xE2, 0x28, 0xA1],
        ] as [[UInt8]])
    func invalidUTF8(sequence: [UInt8]) {
        for prefix in [[0x22, 0x61], [0x22, 0x5C, 0x74], [0x7B, 0x22]] as [[UInt8]] {
            let document = prefix + sequence + [0x22] + (prefix[0] == 0x7B ? Array(":1}".utf8) : [])
            #expect(throws: JSONError(.invalidUTF8, at: prefix.count, found: sequence[0])) {
                try JSONValue.parse(document)
            }
        }
    }

    @Test(
        "strict RFC 8259: each malformed document fails with its reason and offset",
        arguments: [
            ("", JSONError.Reason.emptyInput, 0),
            (" \n\t", .emptyInput, 3),
            ("[1,]", .expectedValue, 3),
            ("[,1]", .expectedValue, 1),
            (#"{"a":1,}"#, .expectedKey, 7),
            ("{", .expectedKey, 1),
            ("{1:2}", .expectedKey, 1),
            ("{'a':1}", .expectedKey, 1),
            (#"{"a" 1}"#, .expectedColon, 5),
            (#"{"a""#, .expectedColon, 4),
            (#"{"a":}"#, .expectedValue, 5),
            (#"{"a":1 "b":2}"#, .expectedCommaOrObjectEnd, 7),
            (#"{"a":1"#, .expectedCommaOrObjectEnd, 6),
            ("[1 2]", .expectedCommaOrArrayEnd, 3),
            ("[1", .expectedCommaOrArrayEnd, 2),
            ("[", .expectedValue, 1),
            ("tru", .invalidLiteral, 3),
            ("nul", .invalidLiteral, 3),
            ("fals3", .invalidLiteral, 4),
            ("True", .expectedValue, 0),
            ("nulll", .trailingCharacters, 4),
            ("NaN", .expectedValue, 0),
            ("Infinity", .expectedValue, 0),
            ("-Infinity", .invalidNumber, 1),
            ("01", .leadingZero, 0),
            ("-01", .leadingZero, 1),
            ("[00]", .leadingZero, 1),
            ("1.", .invalidNumber, 2),
            ("1.e5", .invalidNumber, 2),
            (".5", .expectedValue, 0),
            ("1e", .invalidNumber, 2),
            ("1e+", .invalidNumber, 3),
            ("+1", .expectedValue, 0),
            ("-", .invalidNumber, 1),
            ("0x10", .trailingCharacters, 1),
            ("\"abc", .unterminatedString, 0),
            ("[\"a\\\"]", .unterminatedString, 1),
            ("\"a\u{01}\"", .controlCharacterInString, 2),
            ("\"\t\"", .controlCharacterInString, 1),
            ("\"\\n\n\"", .controlCharacterInString, 3),
            (#""\x""#, .invalidEscape, 2),
            (#""\'""#, .invalidEscape, 2),
            ("\"\\", .invalidEscape, 2),
            (#""\u12""#, .invalidUnicodeEscape, 5),
            (#""\u12G4""#, .invalidUnicodeEscape, 5),
            (#""\U0041""#, .invalidEscape, 2),
            (#""\ud800""#, .unpairedSurrogate, 1),
            (#""\udc00""#, .unpairedSurrogate, 1),
            (#""\ud800\u0041""#, .unpairedSurrogate, 1),
            (#""\ud800\ud800""#, .unpairedSurrogate, 1),
            (#""\ud800\n""#, .unpairedSurrogate, 1),
            (#""\ud800\u00""#, .invalidUnicodeEscape, 11),
            (#"{"a":1,"a":2}"#, .duplicateKey("a"), 7),
            (#"{"a":{"b":1,"b":1}}"#, .duplicateKey("b"), 12),
            (#"{"\u0061":1,"a":2}"#, .duplicateKey("a"), 12),
            ("1 2", .trailingCharacters, 2),
            ("[] x", .trailingCharacters, 3),
            ("{}}", .trailingCharacters, 2),
            ("/* c */ 1", .expectedValue, 0),
            ("[1] // c", .trailingCharacters, 4),
            ("\u{FEFF}1", .expectedValue, 0),
            ("\u{A0}1", .expectedValue, 0),
            ("\u{0}", .expectedValue, 0),
        ])
    func rejects(input: String, reason: JSONError.Reason, offset: Int) {
        let bytes = Array(input.utf8)
        let expected = JSONError(reason, at: offset, found: offset < bytes.count ? bytes[offset] : nil)
        #expect(throws: expected) { try JSONValue.parse(bytes) }
        #expect(throws: expected) { try JSONValue.parse(input) }
    }

    @Test("duplicate keys are found in large objects too")
    func duplicateKeysInLargeObjects() throws {
        let members = (0..<40).map { "\"k\($0)\":\($0)" }
        let unique = "{" + members.joined(separator: ",") + "}"
        #expect(try Self.parse(unique).objectValue?.count == 40)
        let duplicated = "{" + (members + [#""k3":0"#]).joined(separator: ",") + "}"
        let offset = duplicated.utf8.count - 7
        #expect(throws: JSONError(.duplicateKey("k3"), at: offset, found: UInt8(ascii: "\""))) {
            try Self.parse(duplicated)
        }
        let lateDuplicate = "{" + (members + [#""k39":0"#, #""x":1"#]).joined(separator: ",") + "}"
        #expect(throws: JSONError.self) { try Self.parse(lateDuplicate) }
    }

    @Test("nesting is limited with an error, never a stack overflow")
    func depthLimit() throws {
        let limit = JSONValue.defaultMaxDepth
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(try Self.parse(deepest).arrayValue?.count == 1)
        let objects = String(repeating: #"{"a":"#, count: limit) + "1" + String(repeating: "}", count: limit)
        #expect(try Self.parse(objects)["a"] != nil)

        let tooDeep = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
        #expect(throws: JSONError(.tooDeep(limit: limit), at: limit, found: UInt8(ascii: "["))) {
            try Self.parse(tooDeep)
        }
        let hostile = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
        #expect(throws: JSONError(.tooDeep(limit: limit), at: limit, found: UInt8(ascii: "["))) {
            try JSONValue.parse(hostile)
        }
        #expect(throws: JSONError(.tooDeep(limit: 2), at: 2, found: UInt8(ascii: "{"))) {
            try JSONValue.parse(Array(#"[[{"a":1}]]"#.utf8), maxDepth: 2)
        }
        // Depth counts nesting, not the number of containers.
        let wide = "[" + Array(repeating: "[[]]", count: 2000).joined(separator: ",") + "]"
        #expect(try JSONValue.parse(wide, maxDepth: 3).arrayValue?.count == 2000)
    }

    @Test("error messages name the problem, the offset and what was found")
    func errorDescriptions() {
        func message(_ text: String) -> String {
            do {
                _ = try Self.parse(text)
                return "no error"
            } catch {
                return error.description
            }
        }
        #expect(message(#"{"a":1 "b":2}"#) == #"expected ',' or '}' after object member at byte 7 (found '"')"#)
        #expect(message("[1") == "expected ',' or ']' after array element at byte 2 (found end of input)")
        #expect(message("[1,\u{7}]") == "expected a value at byte 3 (found byte 0x7)")
        #expect(message(#"{"a":1,"a":2}"#) == #"duplicate key "a" at byte 7"#)
        #expect(message("\"\u{e9}\"") == "no error")
        #expect(message("\"\" x") == "unexpected characters after the JSON value at byte 3 (found 'x')")
        #expect(message("[\"\u{1}\"]") == "unescaped control character in string at byte 2 (found byte 0x1)")
        #expect(message(" ") == "empty document at byte 1")
        #expect(message("\"abc") == "unterminated string at byte 0")
    }

    @Test("all entry points agree")
    func entryPoints() throws {
        let text = #"{"a":[1,"é"]}"#
        let bytes = Array(text.utf8)
        let expected = try JSONValue.parse(bytes)
        #expect(try JSONValue.parse(text) == expected)
        #expect(try bytes.withUnsafeBytes { buffer throws(JSONError) in try JSONValue.parse(buffer) } == expected)
        let padded = Array("xx".utf8) + bytes + Array("yy".utf8)
        #expect(try JSONValue.parse(padded[2..<(2 + bytes.count)]) == expected)
        #expect(try JSONValue.parse(bytes.lazy.map { $0 }) == expected)
        #expect(throws: JSONError(.trailingCharacters, at: bytes.count, found: UInt8(ascii: "y"))) {
            try JSONValue.parse(padded[2...])
        }
    }

    // MARK: Numbers

    @Test("integers stay exact across the whole Int64 and UInt64 ranges")
    func exactIntegers() throws {
        #expect(try Self.parse("9223372036854775807").int64Value == Int64.max)
        #expect(try Self.parse("-9223372036854775808").int64Value == Int64.min)
        #expect(try Self.parse("9223372036854775808").int64Value == nil)
        #expect(try Self.parse("9223372036854775808").uint64Value == 9_223_372_036_854_775_808)
        #expect(try Self.parse("-9223372036854775809").int64Value == nil)
        #expect(try Self.parse("18446744073709551615").uint64Value == UInt64.max)
        #expect(try Self.parse("18446744073709551616").uint64Value == nil)
        #expect(try Self.parse("18446744073709551616").int64Value == nil)
        #expect(
            try Self.parse("123456789012345678901234567890").numberValue?.literal == "123456789012345678901234567890")
        #expect(try Self.parse("-1").uint64Value == nil)
        #expect(try Self.parse("-0").uint64Value == 0)
        #expect(try Self.parse("1.0").int64Value == nil)
        #expect(try Self.parse("1e3").int64Value == nil)
        #expect(try Self.parse("1.0").doubleValue == 1)
        #expect(try Self.parse("1E3").doubleValue == 1000)
        #expect(try Self.parse("1e400").doubleValue == .infinity)
        #expect(try Self.parse("12").numberValue?.isInteger == true)
        #expect(try Self.parse("1.5").numberValue?.isInteger == false)
        #expect(try Self.parse("2E-3").numberValue?.isInteger == false)
        #expect(JSONValue.string("1").int64Value == nil)
        #expect(JSONValue.int(Int64.min).serialized() == "-9223372036854775808")
        #expect(JSONValue.uint(UInt64.max).serialized() == "18446744073709551615")
        #expect(JSONValue.int(42).int64Value == 42)
    }

    @Test("number literals are validated")
    func numberLiterals() {
        for valid in ["0", "-0", "1", "-12", "0.5", "1e5", "1E+5", "-1.25e-7", "10", "123456789012345678901234"] {
            #expect(JSONNumber(literal: valid)?.literal == valid)
        }
        for invalid in ["", "-", "01", "+1", ".5", "1.", "1e", "1e+", "NaN", "inf", "0x1", " 1", "1 ", "1_000", "١"] {
            #expect(JSONNumber(literal: invalid) == nil, "\(invalid)")
        }
    }

    @Test("doubles are written in their shortest round-trip form")
    func doubles() throws {
        let cases: [(Double, String)] = [
            (0.1, "0.1"), (1, "1.0"), (-0.0, "-0.0"), (1e21, "1e+21"), (1e-7, "1e-07"),
            (.leastNonzeroMagnitude, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
            (123.456, "123.456"),
        ]
        for (value, text) in cases {
            #expect(JSONValue.double(value).serialized() == text)
            let back = try #require(try Self.parse(text).doubleValue)
            #expect(back.bitPattern == value.bitPattern)
        }
        #expect(JSONValue.double(.nan) == .null)
        #expect(JSONValue.double(.infinity) == .null)
        #expect(JSONNumber(-Double.infinity) == nil)
        var random = SeededGenerator(seed: 7)
        for _ in 0..<2000 {
            let value = Double(bitPattern: random.next())
            guard value.isFinite else { continue }
            let back = try #require(try Self.parse(JSONValue.double(value).serialized()).doubleValue)
            #expect(back.bitPattern == value.bitPattern)
        }
    }

    // MARK: Writing

    @Test("compact output has no whitespace and keeps order")
    func compact() {
        let value = JSONValue.object([("b", .int(1)), ("a", .array([.bool(true), .null])), ("id", .string("n1"))])
        #expect(value.serialized() == #"{"b":1,"a":[true,null],"id":"n1"}"#)
        let literal: JSONValue = ["a": 1, "b": [true, nil, "x", 1.5], "c": [:], "d": []]
        #expect(literal.serialized() == #"{"a":1,"b":[true,null,"x",1.5],"c":{},"d":[]}"#)
        var buffer = Array("prefix ".utf8)
        literal["b"]?.write(to: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"prefix [true,null,"x",1.5]"#)
        #expect(literal.serializedBytes() == Array(literal.serialized().utf8))
    }

    @Test("pretty output indents by two spaces")
    func pretty() {
        let value: JSONValue = ["a": 1, "b": [true, nil, ["c": "d"]], "e": [:], "f": []]
        let expected = """
            {
              "a": 1,
              "b": [
                true,
                null,
                {
                  "c": "d"
                }
              ],
              "e": {},
              "f": []
            }
            """
        #expect(value.serialized(pretty: true) == expected)
        #expect(JSONValue.string("x").serialized(pretty: true) == #""x""#)
        #expect(JSONValue.array([]).serialized(pretty: true) == "[]")
    }

    @Test("strings escape quotes, backslashes and control characters only")
    func stringEscaping() {
        let text = "\u{0}\u{1f}\"\\/\n\t\r\u{8}\u{c}\u{b}é😀\u{7f}\u{2028}"
        let expected = #""\u0000\u001f\"\\/\n\t\r\b\f\u000bé😀"# + "\u{7f}\u{2028}\""
        #expect(JSONValue.string(text).serialized() == expected)
        #expect(text.jsonQuoted == expected)
        #expect("".jsonQuoted == #""""#)
        #expect(JSONValue.object([("k\"\n", "v")]).serialized() == #"{"k\"\n":"v"}"#)
    }

    @Test("import then export is byte-identical for compact documents")
    func byteIdenticalReexport() throws {
        let lines = [
            #"{"id":"01JD","type":"note.created","at":"2026-11-29T12:00:00.000000Z","n":1.50,"big":12345678901234567890123}"#,
            #"{"z":[],"y":{},"x":[-0,1E5,2e-3,0.0],"s":"\u00e9 is é; \/ stays"}"#,
        ]
        for line in lines {
            let reexported = try Self.parse(line).serialized()
            // Escapes are normalized (\u00e9 becomes é, \/ becomes /); everything else is kept.
            let normalized = line.replacingEscapes()
            #expect(reexported == normalized)
            #expect(try Self.parse(reexported).serialized() == reexported)
        }
    }

    // MARK: Robustness

    @Test("parse(serialize(v)) == v for random values, compact and pretty")
    func randomRoundTrip() throws {
        var random = SeededGenerator(seed: 0xC0FFEE)
        for _ in 0..<3000 {
            let value = RandomJSON.value(&random, depth: 0)
            #expect(try JSONValue.parse(value.serialized()) == value)
            #expect(try JSONValue.parse(value.serialized(pretty: true)) == value)
        }
    }

    @Test("100,000 mutated documents never trap; failures are JSONErrors at a real offset")
    func mutationFuzz() throws {
        var random = SeededGenerator(seed: 0xF022)
        var seeds: [[UInt8]] = (0..<64).map { _ in RandomJSON.value(&random, depth: 0).serializedBytes() }
        seeds += [
            #"{"id":"n1","title":"Caf\u00e9 \ud83d\ude00","tags":["a","b"],"rev":3,"x":-1.5e-3}"#,
            #"[[[[[[{"a":[1,2,{"b":null}]}]]]]]]"#, "\"\\u0041\\n\"", "0", "-0.0e+1", "[true,false,null]",
        ].map { Array($0.utf8) }
        let interesting: [UInt8] =
            Array(#"{}[]",:\ute+-.0123456789"#.utf8) + [0, 0x1F, 0x7F, 0x80, 0xC3, 0xED, 0xF4, 0xFF, 0x20]
        var accepted = 0
        var rejected = 0
        for _ in 0..<100_000 {
            var bytes = seeds[Int(random.next() % UInt64(seeds.count))]
            for _ in 0...(random.next() % 3) {
                RandomJSON.mutate(&bytes, &random, interesting: interesting)
            }
            do {
                let value = try JSONValue.parse(bytes)
                accepted += 1
                // Whatever is accepted must survive a round trip.
                #expect(try JSONValue.parse(value.serializedBytes()) == value)
            } catch {
                rejected += 1
                #expect(error.offset >= 0 && error.offset <= bytes.count)
                #expect(error.found == (error.offset < bytes.count ? bytes[error.offset] : nil))
                #expect(!error.description.isEmpty)
            }
        }
        #expect(accepted + rejected == 100_000)
        #expect(accepted > 1000 && rejected > 50_000)
    }
}

/// Random JSON values and byte mutations from a fixed-seed generator.
private enum RandomJSON {
    static func value(_ random: inout SeededGenerator, depth: Int) -> JSONValue {
        switch random.next() % (depth >= 4 ? 4 : 6) {
        case 0: return .null
        case 1: return .bool(random.next() & 1 == 0)
        case 2:
            switch random.next() % 4 {
            case 0: return .int(Int64(bitPattern: random.next()))
            case 1: return .uint(random.next())
            case 2: return .int(Int64(random.next() % 1000) - 500)
            default: return .double(Double(bitPattern: random.next()))
            }
        case 3: return .string(string(&random))
        case 4: return .array((0..<(random.next() % 5)).map { _ in value(&random, depth: depth + 1) })
        default:
            var members: [(key: String, value: JSONValue)] = []
            for index in 0..<(random.next() % 5) {
                members.append((key: string(&random) + "#\(index)", value: value(&random, depth: depth + 1)))
            }
            return .object(members)
        }
    }

    static func string(_ random: inout SeededGenerator) -> String {
        let pool: [Unicode.Scalar] = [
            "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1f}", "\u{7f}", "é", "€", "😀",
            "\u{FFFF}", "\u{10FFFF}", "\u{2028}", "\u{FEFF}", "\u{D7FF}", "\u{E000}",
        ]
        var scalars = String.UnicodeScalarView()
        for _ in 0..<(random.next() % 12) {
            scalars.append(pool[Int(random.next() % UInt64(pool.count))])
        }
        return String(scalars)
    }

    static func mutate(_ bytes: inout [UInt8], _ random: inout SeededGenerator, interesting: [UInt8]) {
        let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
        switch random.next() % 6 {
        case 0: bytes.removeSubrange(position...)
        case 1 where !bytes.isEmpty: bytes[position] ^= 1 << (random.next() % 8)
        case 2: bytes.insert(interesting[Int(random.next() % UInt64(interesting.count))], at: position)
        case 3 where !bytes.isEmpty: bytes.remove(at: position)
        case 4: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
        default:
            let end = min(bytes.count, position + Int(random.next() % 8))
            bytes.insert(contentsOf: Array(bytes[position..<end]), at: position)
        }
    }
}

extension String {
    /// The two escapes used in `byteIdenticalReexport`, decoded as the parser does.
    fileprivate func replacingEscapes() -> String {
        var result = ""
        var rest = Substring(self)
        while let slash = rest.firstIndex(of: "\\") {
            result += rest[..<slash]
            let after = rest[rest.index(after: slash)...]
            if after.hasPrefix("u00e9") {
                result += "é"
                rest = after.dropFirst(5)
            } else {
                result += after.prefix(1)
                rest = after.dropFirst(1)
            }
        }
        return result + rest
    }
}
