internal import CStemmer

/// The language whose Snowball stemmer reduces indexed and searched words to their stems
/// (`running`, `runs` and `run` all give `run`), or none.
///
/// The index stores stems, so a store's language is part of its projection version: changing
/// it rebuilds the index.
public struct SearchLanguage: Sendable, Hashable, CustomStringConvertible {
    /// The Snowball algorithm's name (`english`, `french`...), or `none`.
    public let name: String

    /// No stemming: words are matched as folded.
    public static let none = SearchLanguage(checked: "none")
    /// The default.
    public static let english = SearchLanguage(checked: "english")

    private init(checked name: String) { self.name = name }

    /// The language called `name` (any case), or nil when Snowball has no stemmer of that name.
    public init?(_ name: String) {
        let lowered = name.lowercased()
        guard lowered == "none" || Self.stemmed.contains(lowered) else { return nil }
        self.name = lowered
    }

    /// Every name ``init(_:)`` accepts: `none` and the languages of the Snowball library.
    public static var names: [String] { ["none"] + stemmed }

    /// The libstemmer algorithms, sorted (it also lists ISO codes such as `en`: those are left out).
    private static let stemmed: [String] = {
        var out: [String] = []
        guard var p = sb_stemmer_list() else { return out }
        while let name = p.pointee {
            let s = String(cString: name)
            if s.count > 3 { out.append(s) }
            p += 1
        }
        return out.sorted()
    }()

    public var description: String { name }

    /// A stemmer for this language, or nil for `none`.
    func makeStemmer() -> Stemmer? { self == .none ? nil : Stemmer(name) }
}

/// One Snowball stemmer. It keeps state between calls, so it belongs to one operation on one
/// thread; each index update, build and search makes its own.
final class Stemmer {
    private let handle: OpaquePointer

    init?(_ algorithm: String) {
        guard let h = sb_stemmer_new(algorithm, "UTF_8") else { return nil }
        handle = h
    }

    deinit { sb_stemmer_delete(handle) }

    /// Calls `body` with the stem of `term` (folded UTF-8), valid only during the call. A term
    /// the stemmer cannot take (it runs out of memory) is passed on as it is.
    @inline(__always)
    func stem(_ term: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard let base = term.baseAddress, let out = sb_stemmer_stem(handle, base, Int32(term.count)) else {
            body(term)
            return
        }
        let n = Int(sb_stemmer_length(handle))
        body(UnsafeBufferPointer(start: out, count: max(0, n)))
    }

    /// The stem of `term`, as a new array.
    func stem(_ term: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        term.withUnsafeBufferPointer { t in stem(t) { out = Array($0) } }
        // An empty stem would be no term at all: keep the word.
        return out.isEmpty ? term : out
    }
}

extension SearchQuery {
    /// The query with its words and phrases reduced to their stems in `language`, as the index
    /// holds them (prefixes stay as written: `run*` matches the stems that start with `run`).
    public func stemmed(_ language: SearchLanguage) -> SearchQuery {
        guard let stemmer = language.makeStemmer() else { return self }
        func walk(_ n: Node) -> Node {
            switch n {
            case .clause(var c):
                if c.kind != .prefix { c.terms = c.terms.map { stemmer.stem($0) } }
                return .clause(c)
            case .all(let a, let e): return .all(a.map(walk), excluded: e.map(walk))
            case .any(let a): return .any(a.map(walk))
            }
        }
        return SearchQuery(root: walk(root))
    }
}

extension Snippet {
    /// For each of `stems`, the first word of `texts` (folded, as written) whose stem it is:
    /// what to show a reader for a stem the index matched (`receive` for `receiv`).
    public static func words(
        forStems stems: [String], in texts: [String], language: SearchLanguage
    ) -> [String: String] {
        var wanted = Set(stems)
        var found: [String: String] = [:]
        guard !wanted.isEmpty else { return found }
        guard let stemmer = language.makeStemmer() else {
            for s in stems { found[s] = s }
            return found
        }
        for text in texts where !wanted.isEmpty {
            Tokenizer.forEachTerm(in: text) { t, _, _ in
                stemmer.stem(t) { stem in
                    let key = String(decoding: stem.isEmpty ? t : stem, as: UTF8.self)
                    if wanted.remove(key) != nil { found[key] = String(decoding: t, as: UTF8.self) }
                }
            }
        }
        return found
    }
}
