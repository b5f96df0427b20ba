import CYAML

// The front matter of a Markdown note is YAML (what Obsidian, Jekyll, Hugo and the rest write):
// block and flow lists, nested maps, quoted and block scalars. This reads it with libyaml's event
// parser (Debian's libyaml-dev, linked statically) and keeps, besides the values, each top-level
// entry's exact source text, so that a writer can keep the entries it does not own byte for byte.
//
// libyaml's marks (`yaml_mark_t`) count *characters*, not bytes: `index` is the number of
// Unicode scalars before the mark (a CRLF counts as two), `column` the characters since the line
// start, and `line` also counts NEL, U+2028 and U+2029 as line breaks. Byte offsets come from
// walking the UTF-8 from the start to the mark's `index`; lines and columns shown to the user
// are counted here, on "\n", "\r\n" and a lone "\r", as an editor shows them.

/// A YAML value as the front matter holds it.
///
/// Aliases (`*name`) are resolved to a copy of the anchored node's value; anchors and tags are
/// ignored.
indirect enum YAMLNode: Equatable, Sendable {
    /// A scalar: its text after YAML's quoting and folding rules; `plain` when unquoted (so
    /// `null`, `~`, `true`, numbers and dates are recognisable by the caller). Block scalars
    /// (`|`, `>`) are not plain.
    case scalar(String, plain: Bool)
    case sequence([YAMLNode])
    /// The pairs in document order.
    case mapping([YAMLPair])
}

/// One key and its value in a mapping.
struct YAMLPair: Equatable, Sendable {
    var key: YAMLNode
    var value: YAMLNode
}

extension YAMLNode {
    /// The text of a scalar; nil for a list or a mapping.
    var text: String? {
        if case .scalar(let text, _) = self { text } else { nil }
    }

    /// A plain (unquoted) `""`, `~`, `null`, `Null` or `NULL`.
    var isNull: Bool {
        guard case .scalar(let text, plain: true) = self else { return false }
        switch text {
        case "", "~", "null", "Null", "NULL": return true
        default: return false
        }
    }

    /// A scalar as a list of one text (none when null); a list of scalars as their texts (its
    /// null items left out); nil for a mapping or a list holding a list or a mapping.
    var strings: [String]? {
        switch self {
        case .scalar(let text, _):
            return isNull ? [] : [text]
        case .sequence(let items):
            var texts: [String] = []
            texts.reserveCapacity(items.count)
            for item in items where !item.isNull {
                guard let text = item.text else { return nil }
                texts.append(text)
            }
            return texts
        case .mapping:
            return nil
        }
    }

    /// A plain `true`/`false`, `yes`/`no` or `on`/`off`, in any case.
    var bool: Bool? {
        guard case .scalar(let text, plain: true) = self, text.utf8.count <= 5 else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: return nil
        }
    }
}

/// One top-level entry of a front matter mapping.
struct FrontMatterEntry: Equatable, Sendable {
    /// The key scalar's text.
    var key: String
    /// The value; an empty value (`key:` with nothing) is `.scalar("", plain: true)`.
    var value: YAMLNode
    /// The entry's exact source text: from the start of the line where its key begins, through
    /// the end of the line (its "\n" or "\r\n" included) before the line where the next
    /// top-level key begins, or the end of the text. Comments and blank lines between entries
    /// belong to the entry before them, and `leading` followed by every entry's `source` is the
    /// whole YAML text byte for byte. (In a flow mapping, `{a: 1, b: 2}`, keys can share a line:
    /// the first entry on a line has it, the others' source is empty.)
    var source: String
}

/// The front matter of a note: a YAML mapping read with its entries' source text.
struct FrontMatterYAML: Equatable, Sendable {
    /// Text before the first entry's line (comments, blank lines), byte for byte; the whole text
    /// when there is no entry.
    var leading: String
    var entries: [FrontMatterEntry]

    /// Collections nested deeper than this (the top-level mapping is the first level) are
    /// refused.
    static let maximumDepth = 64
    /// More values than this, counting every alias as the copy it stands for, are refused (the
    /// "billion laughs" of aliases to aliases).
    static let maximumNodes = 100_000

    /// Parses the text between the `---` fences (the fence lines themselves excluded).
    ///
    /// Empty or comment-only text is an empty mapping. A document that is not a mapping (a bare
    /// scalar or a list), a syntax error, a second document, a top-level key that is a list or a
    /// mapping, or a top-level key given twice throws, as do nesting deeper than
    /// `maximumDepth` and more than `maximumNodes` values.
    ///
    /// libyaml refuses a tab on a line holding only spaces and tabs where YAML 1.2 sees a blank
    /// line; when it does, the text is read again with those tabs read as spaces (the sources
    /// keep the tabs).
    ///
    /// Problems count lines from `firstLine` (the text's first line is that line of its file).
    static func parse(_ text: String, firstLine: Int = 1) throws(YAMLProblem) -> FrontMatterYAML {
        let bytes = Array(text.utf8)
        do {
            var reader = FrontMatterReader(bytes: bytes, input: bytes, firstLine: firstLine)
            return try reader.read()
        } catch {
            guard let lenient = blankLineTabsAsSpaces(bytes) else { throw error }
            var reader = FrontMatterReader(bytes: bytes, input: lenient, firstLine: firstLine)
            return try reader.read()
        }
    }

    /// The bytes with every tab of a line of only spaces and tabs made a space (the same length,
    /// so libyaml's marks still fit the text); nil when there is no such tab.
    private static func blankLineTabsAsSpaces(_ bytes: [UInt8]) -> [UInt8]? {
        var out = bytes
        var changed = false
        var lineStart = 0
        var blank = true
        var tabs = false
        for i in 0...bytes.count {
            let b = i < bytes.count ? bytes[i] : 0x0A
            switch b {
            case 0x0A, 0x0D:
                if blank && tabs {
                    for j in lineStart..<i where out[j] == 0x09 { out[j] = 0x20 }
                    changed = true
                }
                lineStart = i + 1
                blank = true
                tabs = false
            case 0x09: tabs = true
            case 0x20: break
            default: blank = false
            }
        }
        return changed ? out : nil
    }
}

/// Why front matter could not be read: one line for the user naming the line (1-based, counted
/// within the YAML text), the column (1-based, in characters) and what is wrong, such as
/// `line 3, column 5: did not find expected key (while parsing a block mapping)`.
struct YAMLProblem: Error, Equatable, Sendable, CustomStringConvertible {
    var line: Int
    var column: Int
    var message: String
    var description: String
}

extension YAMLProblem {
    init(line: Int, column: Int, message: String) {
        self.init(
            line: line, column: column, message: message, description: "line \(line), column \(column): \(message)")
    }
}

/// One pass of libyaml's event parser over the text, building the nodes with an explicit stack
/// (no recursion, whatever the input).
private struct FrontMatterReader {
    /// A list or mapping being read.
    private struct Open {
        var isMapping: Bool
        var items: [YAMLNode] = []
        var pairs: [YAMLPair] = []
        var pendingKey: YAMLNode?
        var anchor: String?
        /// `nodes` before this collection was counted.
        var nodesBefore: Int
        /// The character index (libyaml's mark) where it starts.
        var start: Int
    }

    /// A top-level key: its text and the character index where it starts.
    private struct Key {
        var text: String
        var start: Int
    }

    /// The text, for the sources and positions.
    let bytes: [UInt8]
    /// What libyaml reads: the text, or the text with tabs on blank lines made spaces.
    let input: [UInt8]
    /// Where the characters that libyaml counts begin: after a byte order mark, which its reader
    /// skips without counting.
    private let base: Int
    private var stack: [Open] = []
    private var anchors: [String: (node: YAMLNode, nodes: Int)] = [:]
    /// Every node produced so far, aliases counted as the copies they stand for.
    private var nodes = 0
    private var documents = 0
    /// Set once the document's root is known to be a mapping (or empty).
    private var sawRoot = false
    private var keys: [Key] = []
    private var values: [YAMLNode] = []
    private var seen: [String: Int] = [:]

    /// The line number of the text's first line.
    let firstLine: Int

    init(bytes: [UInt8], input: [UInt8], firstLine: Int = 1) {
        self.bytes = bytes
        self.input = input
        self.firstLine = firstLine
        base = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    }

    mutating func read() throws(YAMLProblem) -> FrontMatterYAML {
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        defer { parser.deallocate() }
        let event = UnsafeMutablePointer<yaml_event_t>.allocate(capacity: 1)
        defer { event.deallocate() }
        guard yaml_parser_initialize(parser) != 0 else {
            throw YAMLProblem(line: 1, column: 1, message: "out of memory")
        }
        defer { yaml_parser_delete(parser) }
        // libyaml reads the input in place while parsing: a copy of the bytes that outlives it.
        let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(input.count, 1))
        defer { copy.deallocate() }
        copy.initialize(from: input, count: input.count)
        yaml_parser_set_input_string(parser, copy, input.count)

        var done = false
        while !done {
            guard yaml_parser_parse(parser, event) != 0 else { throw libyamlProblem(parser.pointee) }
            defer { yaml_event_delete(event) }
            done = try handle(event.pointee)
        }
        return result()
    }

    /// Takes one event; true at the end of the stream.
    private mutating func handle(_ event: yaml_event_t) throws(YAMLProblem) -> Bool {
        let at = Int(event.start_mark.index)
        switch event.type {
        case YAML_STREAM_END_EVENT:
            return true
        case YAML_DOCUMENT_START_EVENT:
            documents += 1
            if documents > 1 {
                throw problem(
                    atCharacter: at,
                    "a second YAML document begins here (a line \"---\" or \"...\" inside the front matter?)")
            }
        case YAML_SCALAR_EVENT:
            let s = event.data.scalar
            let text =
                s.value.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(s.length)), as: UTF8.self) }
                ?? ""
            let node = YAMLNode.scalar(text, plain: s.style == YAML_PLAIN_SCALAR_STYLE)
            try count(1, at: at)
            if stack.isEmpty {
                // An empty document (`---` and nothing) is an empty mapping; any other scalar is not one.
                guard node == .scalar("", plain: true) else {
                    throw problem(
                        atCharacter: at, "the front matter is a single value, not a mapping of keys to values")
                }
                sawRoot = true
                return false
            }
            if let anchor = Self.string(s.anchor) { anchors[anchor] = (node, 1) }
            try add(node, at: at)
        case YAML_ALIAS_EVENT:
            let name = Self.string(event.data.alias.anchor) ?? ""
            guard let anchored = anchors[name] else {
                throw problem(atCharacter: at, "the alias *\(name) names no anchor before it")
            }
            try count(anchored.nodes, at: at)
            guard !stack.isEmpty else {
                throw problem(atCharacter: at, "the front matter is an alias, not a mapping of keys to values")
            }
            try add(anchored.node, at: at)
        case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
            let isMapping = event.type == YAML_MAPPING_START_EVENT
            if stack.isEmpty {
                guard isMapping else {
                    throw problem(atCharacter: at, "the front matter is a list, not a mapping of keys to values")
                }
                sawRoot = true
            } else if stack.count == 1 && stack[0].pendingKey == nil {
                throw problem(atCharacter: at, "a top-level key must be text, not a \(isMapping ? "mapping" : "list")")
            }
            guard stack.count < FrontMatterYAML.maximumDepth else {
                throw problem(
                    atCharacter: at, "lists and mappings nested deeper than \(FrontMatterYAML.maximumDepth) levels")
            }
            let anchor =
                isMapping ? Self.string(event.data.mapping_start.anchor) : Self.string(event.data.sequence_start.anchor)
            try count(1, at: at)
            stack.append(Open(isMapping: isMapping, anchor: anchor, nodesBefore: nodes - 1, start: at))
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            guard let open = stack.popLast() else { return false }
            if stack.isEmpty { return false }  // the root mapping: its entries are in `keys` and `values`
            let node: YAMLNode = open.isMapping ? .mapping(open.pairs) : .sequence(open.items)
            if let anchor = open.anchor { anchors[anchor] = (node, nodes - open.nodesBefore) }
            try add(node, at: open.start)
        default:
            break
        }
        return false
    }

    /// Counts `n` more nodes, refusing more than `maximumNodes`.
    private mutating func count(_ n: Int, at: Int) throws(YAMLProblem) {
        nodes += n
        if nodes > FrontMatterYAML.maximumNodes {
            throw problem(
                atCharacter: at,
                "more than \(FrontMatterYAML.maximumNodes) values once aliases are expanded (an alias bomb?)")
        }
    }

    /// Puts a finished node into the collection being read.
    private mutating func add(_ node: YAMLNode, at: Int) throws(YAMLProblem) {
        let top = stack.count - 1
        if !stack[top].isMapping {
            stack[top].items.append(node)
        } else if let key = stack[top].pendingKey {
            stack[top].pendingKey = nil
            if top == 0 {
                values.append(node)
            } else {
                stack[top].pairs.append(YAMLPair(key: key, value: node))
            }
        } else {
            stack[top].pendingKey = node
            guard top == 0 else { return }
            guard let text = node.text else {
                throw problem(atCharacter: at, "a top-level key must be text, not a list or a mapping")
            }
            if let first = seen[text] {
                let (line, _) = position(ofByte: byteOffset(ofCharacter: first))
                throw problem(atCharacter: at, "the key \"\(text)\" is given twice (first on line \(line))")
            }
            seen[text] = at
            keys.append(Key(text: text, start: at))
        }
    }

    private func result() -> FrontMatterYAML {
        guard !keys.isEmpty else {
            return FrontMatterYAML(leading: String(decoding: bytes, as: UTF8.self), entries: [])
        }
        // The byte offset of the start of each key's line (keys come in document order).
        var starts: [Int] = []
        starts.reserveCapacity(keys.count)
        var walker = (character: 0, byte: base)
        for key in keys {
            walker = advance(walker, to: key.start)
            starts.append(lineStart(ofByte: walker.byte))
        }
        var entries: [FrontMatterEntry] = []
        entries.reserveCapacity(keys.count)
        for (i, key) in keys.enumerated() {
            var source = ""
            if i == 0 || starts[i] != starts[i - 1] {
                let end = starts[(i + 1)...].first { $0 > starts[i] } ?? bytes.count
                source = String(decoding: bytes[starts[i]..<end], as: UTF8.self)
            }
            entries.append(FrontMatterEntry(key: key.text, value: values[i], source: source))
        }
        return FrontMatterYAML(leading: String(decoding: bytes[..<starts[0]], as: UTF8.self), entries: entries)
    }

    // MARK: - Positions

    /// Walks UTF-8 forward from a (character, byte) position to a character index.
    private func advance(_ from: (character: Int, byte: Int), to index: Int) -> (character: Int, byte: Int) {
        var (character, byte) = from
        while character < index && byte < bytes.count {
            byte += 1
            while byte < bytes.count && bytes[byte] & 0xC0 == 0x80 { byte += 1 }
            character += 1
        }
        return (character, byte)
    }

    private func byteOffset(ofCharacter index: Int) -> Int {
        advance((0, base), to: index).byte
    }

    /// The offset of the first byte of the line holding `offset` (lines end at "\n", "\r\n" or a
    /// lone "\r").
    private func lineStart(ofByte offset: Int) -> Int {
        var i = min(offset, bytes.count)
        while i > 0 && bytes[i - 1] != 0x0A && bytes[i - 1] != 0x0D { i -= 1 }
        return i
    }

    /// The 1-based line and column (in characters) of a byte offset.
    private func position(ofByte offset: Int) -> (line: Int, column: Int) {
        let end = min(offset, bytes.count)
        var line = firstLine
        var lineStart = 0
        var i = 0
        while i < end {
            let b = bytes[i]
            if b == 0x0A || (b == 0x0D && (i + 1 >= bytes.count || bytes[i + 1] != 0x0A)) {
                line += 1
                lineStart = i + 1
            }
            i += 1
        }
        var column = 1
        for b in bytes[lineStart..<end] where b & 0xC0 != 0x80 { column += 1 }
        return (line, column)
    }

    private func problem(atByte offset: Int, _ message: String) -> YAMLProblem {
        let (line, column) = position(ofByte: offset)
        return YAMLProblem(line: line, column: column, message: message)
    }

    private func problem(atCharacter index: Int, _ message: String) -> YAMLProblem {
        problem(atByte: byteOffset(ofCharacter: index), message)
    }

    /// libyaml's own account of an error: its problem, where, and what it was reading.
    private func libyamlProblem(_ parser: yaml_parser_t) -> YAMLProblem {
        let what = Self.string(parser.problem) ?? "cannot be read"
        switch parser.error {
        case YAML_MEMORY_ERROR:
            return YAMLProblem(line: 1, column: 1, message: "out of memory")
        case YAML_READER_ERROR:
            // The reader counts bytes (`problem_offset`) and has no mark.
            var message = what
            if parser.problem_value >= 0 {
                let hex = String(parser.problem_value, radix: 16, uppercase: true)
                message += " (U+\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex))"
            }
            return problem(atByte: Int(parser.problem_offset), message)
        default:
            let at = byteOffset(ofCharacter: Int(parser.problem_mark.index))
            var message = what
            if let context = Self.string(parser.context) {
                let (line, column) = position(ofByte: at)
                let began = position(ofByte: byteOffset(ofCharacter: Int(parser.context_mark.index)))
                if began.line != line {
                    message += " (\(context) that began on line \(began.line), column \(began.column))"
                } else if began.column != column {
                    message += " (\(context) that began at column \(began.column))"
                } else {
                    message += " (\(context))"
                }
            }
            return problem(atByte: at, message)
        }
    }

    private static func string(_ c: UnsafePointer<CChar>?) -> String? {
        c.map { String(cString: $0) }
    }

    private static func string(_ c: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        c.map { String(cString: UnsafePointer($0)) }
    }
}
