internal import CStemmer
import Glibc

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

    /// A stemmer for this language, or nil for `none`; `remembering` the stems of the words it
    /// met (for a bulk build, which stems the same words over and over).
    func makeStemmer(remembering: Bool = false) -> Stemmer? {
        self == .none ? nil : Stemmer(name, remembering: remembering)
    }
}

/// One Snowball stemmer. It keeps state between calls, so it belongs to one operation on one
/// thread; each index update, build and search makes its own.
final class Stemmer {
    private let handle: OpaquePointer
    /// The stems of words met before, or nil (see ``StemCache``). A value holding the table's
    /// address, not an object: reading it costs no retain and release per word (a stored
    /// class reference did, about 3% of a bulk build's tokenizing thread).
    private let cache: StemCache?

    init?(_ algorithm: String, remembering: Bool = false) {
        guard let h = sb_stemmer_new(algorithm, "UTF_8") else { return nil }
        handle = h
        cache = remembering ? StemCache() : nil
    }

    deinit {
        sb_stemmer_delete(handle)
        cache?.free()
    }

    /// Calls `body` with the stem of `term` (folded UTF-8), valid only during the call. A term
    /// the stemmer cannot take (it runs out of memory) is passed on as it is.
    @inline(__always)
    func stem(_ term: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        if let cache, term.count <= StemCache.longest, !term.isEmpty {
            cache.stem(term, by: self, body)
            return
        }
        stemmed(term, body)
    }

    /// The Snowball stemmer's answer, uncached.
    @inline(__always)
    fileprivate func stemmed(_ term: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
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

/// The stems of the words a stemmer met, for words of up to 24 bytes: 65,536 slots in sets of
/// two, each set the last two words whose hash falls there and their stems. Text repeats its words (a bulk build of the
/// search index stemmed every occurrence of every word: a fifth of a rebuild's instructions),
/// and a slot holds the Snowball stemmer's own answer, so the stems are the same. Until
/// 2026-12-08 it had 16,384 slots of one word: a vocabulary of 30,000 words (the suite's) then
/// lost a word to another falling in its slot so often that the 26,597 stems of 10,000 notes
/// were stemmed 66,930 times, at about 1,600 instructions each.
private struct StemCache {
    static let longest = 24
    private static let slots = 65_536

    /// A word and its stem, each zero-padded to 24 bytes.
    private struct Slot {
        var word: (UInt64, UInt64, UInt64)
        var stem: (UInt64, UInt64, UInt64)
        var wordCount: UInt8
        var stemCount: UInt8
    }

    private let table: UnsafeMutablePointer<Slot>

    /// Zeroed memory, whose slots are empty (`wordCount` 0: a word has one byte at least). Taken
    /// from `calloc`, which maps a table this size as pages the system zeroes when they are
    /// first touched: a stemmer that meets a few words pays for the slots it uses, not for
    /// writing 3.6 MB (a search's snippets make one for a few short notes, or for many long ones).
    /// Nil without the memory (the stemmer then stems every word).
    init?() {
        guard let raw = calloc(Self.slots, MemoryLayout<Slot>.stride) else { return nil }
        table = raw.bindMemory(to: Slot.self, capacity: Self.slots)
    }

    /// Gives the table back (by its stemmer's deinit: the cache is a value, copied freely).
    func free() { Glibc.free(table) }

    @inline(__always)
    func stem(_ term: UnsafeBufferPointer<UInt8>, by stemmer: Stemmer, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var word: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &word) { w in
            if let base = term.baseAddress { w.baseAddress!.copyMemory(from: base, byteCount: term.count) }
        }
        var h = word.0 &* 0x9E37_79B9_7F4A_7C15
        h = (h ^ word.1 ^ (h >> 29)) &* 0xBF58_476D_1CE4_E5B9
        h = (h ^ word.2 ^ UInt64(term.count) ^ (h >> 32)) &* 0x94D0_49BB_1331_11EB
        // Two slots a set: the word last met first, the one met before it second.
        let first = table + 2 * (Int(truncatingIfNeeded: h >> 49) & (Self.slots / 2 - 1))
        let second = first + 1
        if first.pointee.wordCount == UInt8(term.count), first.pointee.word == word {
            Self.pass(first, body)
            return
        }
        if second.pointee.wordCount == UInt8(term.count), second.pointee.word == word {
            swap(&first.pointee, &second.pointee)
            Self.pass(first, body)
            return
        }
        stemmer.stemmed(term) { stem in
            if stem.count <= Self.longest, let base = stem.baseAddress {
                var out: (UInt64, UInt64, UInt64) = (0, 0, 0)
                withUnsafeMutableBytes(of: &out) { o in o.baseAddress!.copyMemory(from: base, byteCount: stem.count) }
                second.pointee = first.pointee
                first.pointee = Slot(word: word, stem: out, wordCount: UInt8(term.count), stemCount: UInt8(stem.count))
            }
            body(stem)
        }
    }

    /// Calls `body` with the stem `slot` holds.
    @inline(__always)
    private static func pass(_ slot: UnsafeMutablePointer<Slot>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        let n = Int(slot.pointee.stemCount)
        withUnsafeBytes(of: &slot.pointee.stem) { s in
            s.withMemoryRebound(to: UInt8.self) { b in body(UnsafeBufferPointer(start: b.baseAddress, count: n)) }
        }
    }
}

extension SearchQuery {
    /// Endings a word that starts with a prefix may go on with, whose stems a prefix matches
    /// too: the index holds stems, and the stem of a word may be shorter than a prefix of it
    /// (`isolat*`: `isolation` and `isolated` are held as `isol`).
    static let prefixEndings: [[UInt8]] = [
        "e", "s", "es", "ed", "ing", "ion", "ions", "ation", "er", "ers", "y", "ies", "ly", "ness", "ment", "ity",
        "al", "ive", "ous", "ate", "ated", "ating", "ency", "ence", "ance", "t", "ts", "ce", "cy", "ic", "ize", "ise",
        "ism", "ist", "ful", "able", "ible", "en", "ung", "ar", "ir", "ez",
    ].map { Array($0.utf8) }

    /// The query with its words and phrases reduced to their stems in `language`, as the index
    /// holds them. A prefix stays as written (`cook*` matches the stems that start with `cook`)
    /// and gains, as further terms matched exactly, the prefix's own stem (`party*` finds what
    /// `party` finds, held as `parti`; `concurrency*` what `concurrency` finds) and the stems
    /// of the prefix with each of ``prefixEndings`` that are the prefix cut by one or two
    /// characters, four at least (`isolat*` and `isolation`, held as `isol`). A stem cut
    /// shorter, or from a word no one writes, is left out: `comm*` and `comming`, held as `com`,
    /// would match every `.com`. Before 2026-12-06 such prefixes found nothing, and excluding
    /// them excluded nothing.
    public func stemmed(_ language: SearchLanguage) -> SearchQuery {
        guard let stemmer = language.makeStemmer() else { return self }
        func walk(_ n: Node) -> Node {
            switch n {
            case .clause(var c):
                if c.kind != .prefix {
                    c.terms = c.terms.map { stemmer.stem($0) }
                } else if let prefix = c.terms.first {
                    var alternates: [[UInt8]] = []
                    let own = stemmer.stem(prefix)
                    if !own.starts(with: prefix) { alternates.append(own) }
                    for ending in Self.prefixEndings {
                        let stem = stemmer.stem(prefix + ending)
                        guard stem.count < prefix.count, prefix.starts(with: stem), prefix.count - stem.count <= 2,
                            stem.count >= 4,
                            !alternates.contains(stem)
                        else { continue }
                        alternates.append(stem)
                    }
                    c.terms = [prefix] + alternates
                }
                return .clause(c)
            case .all(let a, let e): return .all(a.map(walk), excluded: e.map(walk))
            case .any(let a): return .any(a.map(walk))
            }
        }
        return SearchQuery(root: walk(root))
    }
}

extension Snippet {
    /// For each of `stems`, the word of `texts` (folded, as written) whose stem it is that they
    /// hold most often (of those as often, the shortest, then the first in byte order): what to
    /// show a reader for a stem the index matched (`receive` for `receiv`). Before 2026-12-07 it
    /// was the first met, any form: `showing "receivers"` for `recieve` in notes that mostly say
    /// `receive`.
    public static func words(
        forStems stems: [String], in texts: [String], language: SearchLanguage
    ) -> [String: String] {
        let wanted = Set(stems)
        var found: [String: String] = [:]
        guard !wanted.isEmpty else { return found }
        guard let stemmer = language.makeStemmer() else {
            for s in stems { found[s] = s }
            return found
        }
        var counts: [String: [String: Int]] = [:]
        for text in texts {
            Tokenizer.forEachTerm(in: text) { t, _, _ in
                stemmer.stem(t) { stem in
                    let key = String(decoding: stem.isEmpty ? t : stem, as: UTF8.self)
                    if wanted.contains(key) {
                        counts[key, default: [:]][String(decoding: t, as: UTF8.self), default: 0] += 1
                    }
                }
            }
        }
        for (stem, forms) in counts {
            found[stem] = forms.min(by: shownBefore)?.key
        }
        return found
    }

    /// Whether `a` (a word and how often it is met) is shown before `b`: more often, then shorter,
    /// then first in byte order.
    static func shownBefore(_ a: (key: String, value: Int), _ b: (key: String, value: Int)) -> Bool {
        if a.value != b.value { return a.value > b.value }
        if a.key.utf8.count != b.key.utf8.count { return a.key.utf8.count < b.key.utf8.count }
        return a.key.utf8.lexicographicallyPrecedes(b.key.utf8)
    }
}
