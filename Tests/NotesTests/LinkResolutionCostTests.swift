import Basics
import Glibc
import NotesInterchange
import TestSupport
import Testing

@testable import Notes

/// A replayed world that counts the notes resolution reads.
private struct CountingWorld: LinkWorld {
    final class Count { var reads = 0 }
    let inner: StateLinkWorld
    let count = Count()

    func holders(of folded: String) throws -> [TitleHolder] { try inner.holders(of: folded) }
    func aliasHolders(of folded: String) throws -> [TitleHolder] { try inner.aliasHolders(of: folded) }
    func notes(withIDPrefix hex: String) throws -> [Identifier] { try inner.notes(withIDPrefix: hex) }
    func note(_ id: Identifier) throws -> Note? {
        count.reads += 1
        return try inner.note(id)
    }
    func titles(of id: Identifier) throws -> [String] { try inner.titles(of: id) }
    func linkers(of key: LinkKey) throws -> [(key: LinkKey, source: Identifier)] { try inner.linkers(of: key) }
    func forEachLink(_ body: (LinkKey, Identifier) throws -> Void) throws { try inner.forEachLink(body) }
}

@Suite("Links: the cost of resolving a notebook's links")
struct LinkResolutionCostTests {
    @Test("paths that fall back to one file name read its holders once a query, not once a path")
    func fallbackOncePerName() throws {
        // Every folder holds an `index.md` and a note linking `nothere/index.md`, which no file
        // is: each such path falls back to the name `index`, held by every folder's index.
        let folders = 120
        let scratch = TemporaryDirectory("notes-link-cost")
        let vault = scratch.path + "/vault"
        func write(_ path: String, _ text: String) throws {
            let fd = open(vault + "/" + path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            try #require(fd >= 0)
            defer { close(fd) }
            #expect(Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == text.utf8.count)
        }
        #expect(mkdir(vault, 0o755) == 0)
        for f in 0..<folders {
            let folder = "f\(f)"
            #expect(mkdir(vault + "/" + folder, 0o755) == 0)
            try write(folder + "/index.md", "# Index \(f)\n")
            try write(folder + "/a.md", "# A \(f)\n\nSee [x](nothere/index.md).\n")
        }
        let f = try NotebookFixture()
        _ = try f.book.importMarkdown(from: vault)
        // A forward replay, as `--as-of` reads links from (it keeps every title and name).
        let world = CountingWorld(inner: StateLinkWorld(try NotebookState.replay(store: f.book.store)))
        #expect(try LinkResolution.missing(in: world).count == 0)
        let missingReads = world.count.reads
        world.count.reads = 0
        #expect(try LinkResolution.linked(in: world).count > folders)
        // Before (review-s30) each path read every index note two times over (the notes of
        // vaults inside the folder, then the name's holders): 2 * 120 * 120 reads and more.
        #expect(missingReads < 8 * folders, "\(missingReads) reads")
        #expect(world.count.reads < 8 * folders, "\(world.count.reads) reads")
    }
}
