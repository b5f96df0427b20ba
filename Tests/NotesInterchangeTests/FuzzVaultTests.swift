import EventStore
import Foundation
import Notes
import TestSupport
import Testing

@testable import NotesInterchange

/// Hostile Markdown files: vault files mutated (byte flips, splices, truncations, YAML fragments)
/// go through the front matter reader and, a folder at a time, through `importMarkdown`. Every
/// file is read or refused with a reason, never a trap; a refused import changes nothing; an
/// accepted one imports again with no change and passes `verify`. Fixed seed; NOTES_LONG_TESTS=1
/// runs ten times as many cases.
@Suite("Fuzz: Markdown vaults")
struct FuzzVaultTests {
    static let seeds: [[UInt8]] = [
        "---\naliases:\n  - Other name\n  - two\ntags: [a, b/c]\ncssclasses: [wide]\nnested:\n  k: v\n  list: [1, 2]\n---\n# Title\n\nBody [[Other]] #tag\n",
        "---\r\ntitle: 'It''s'\r\ncategory: Work\r\npinned: true\r\n---\r\nbody\r\n",
        "\u{FEFF}# Heading [![b](x)](y)\n\n```\n#no\n```\n[[a|b]] ![[c.png]]\n",
        "---\nid: 11111111-1111-4111-8111-111111111111\ntitle: |\n  multi\n  line\nanchor: &a {x: 1}\nref: *a\n---\n",
        "---\ntags: null\naliases: x\n# comment\ndate: 2024-01-01\n---\n",
    ].map { Array($0.utf8) }

    static let fragments: [[UInt8]] =
        [
            "---\n", "\n---\n", ": ", "- ", "[", "]", "{", "}", "\"", "'", "&x ", "*x", "!!str ", "|\n", ">\n",
            "\t", "#", "[[", "]]", "`", "```\n", "<!--", "-->", "null", "~", "\\", String(repeating: "[", count: 200),
            String(repeating: "- ", count: 100) + "x", "a: &a [*a]",
        ].map { Array($0.utf8) } + [[0xFF], [0x00], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0x0D], [0xE2, 0x80, 0xA8]]

    static func mutate(_ rng: inout SeededGenerator) -> [UInt8] {
        var text = seeds[rng.below(seeds.count)]
        for _ in 0...rng.below(4) {
            let at = text.isEmpty ? 0 : rng.below(text.count + 1)
            switch rng.below(6) {
            case 0 where !text.isEmpty:
                text[min(at, text.count - 1)] ^= UInt8(1) << UInt8(rng.below(8))
            case 1: text.insert(contentsOf: fragments[rng.below(fragments.count)], at: at)
            case 2 where !text.isEmpty:
                let end = min(text.count, at + 1 + rng.below(12))
                text.removeSubrange(min(at, end)..<end)
            case 3: text.removeSubrange(at...)
            case 4:
                let other = seeds[rng.below(seeds.count)]
                text = Array(text[..<at]) + other[rng.below(other.count)...]
            default:
                let end = min(text.count, at + rng.below(40))
                text.insert(contentsOf: text[at..<end], at: end)
            }
        }
        return text
    }

    @Test("mutated files: each parses or is refused with a reason; folders import all or nothing")
    func vaults() throws {
        var rng = SeededGenerator(seed: 0x5641_554C_54)
        let parses = FuzzImportTests.long ? 200_000 : 20_000
        var refused = 0
        for _ in 0..<parses {
            let bytes = Self.mutate(&rng)
            guard let text = String(validating: bytes, as: UTF8.self) else { continue }
            do { _ = try MarkdownNote.parse(text) } catch { refused += 1 }
            _ = MarkdownNote.inlineTags(text)
            _ = MarkdownNote.title(frontMatter: nil, body: text, fileStem: "f")
        }
        #expect(refused > 0)
        let folders = FuzzImportTests.long ? 300 : 30
        var imported = 0
        for round in 0..<folders {
            let s = try InterchangeScratch()
            let dir = s.path + "/vault"
            for i in 0..<(1 + rng.below(6)) {
                let folder = dir + (i % 2 == 0 ? "" : "/sub\(i)")
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try Data(Self.mutate(&rng)).write(to: URL(filePath: folder + "/f\(i).md"))
            }
            let skip = round % 3 == 0
            do {
                let summary = try s.book.importMarkdown(from: dir, skipInvalid: skip)
                imported += summary.created
                let again = try s.book.importMarkdown(from: dir, skipInvalid: skip)
                #expect(again.created == 0 && again.updated == 0, "round \(round)")
                #expect(try s.book.verify().isEmpty, "round \(round)")
                try s.book.exportMarkdown(to: s.path + "/out")
                let back = try s.book.importMarkdown(from: s.path + "/out")
                #expect(back.created == 0, "round \(round): an export imported into its store creates nothing")
            } catch {
                guard case .validation = error else {
                    Issue.record("round \(round): \(error)")
                    continue
                }
                #expect(!skip, "round \(round): --skip-invalid refused: \(error)")
                #expect(try s.head == 0, "round \(round): a refused import changed the store")
            }
        }
        #expect(imported > 0)
    }
}
