import EventStore
import Glibc
import Notes
import Testing

/// The store's size cap (`Notebook.Options.maxStoreBytes`, LMDB's map size limit): the map
/// grows as needed up to the cap, a write past it fails with a clear error and changes
/// nothing, and a larger cap lets the same store grow again.
@Suite("Reliability: the store size cap")
struct ReliabilityResourceTests {
    @Test("hitting the cap is a clear error; the store stays consistent and grows under a larger cap")
    func sizeCap() throws {
        var template = Array("/tmp/notes-cap-tests.XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { p in p.baseAddress.flatMap { mkdtemp($0) } }
        let path = String(cString: try #require(made)) + "/store"
        defer { _ = system("rm -rf '\(path.dropLast(6))'") }
        var options = Notebook.Options(actor: "cap@test")
        options.clock = { 1_800_000_000_000_000 }
        options.maxStoreBytes = 2 << 20
        let body = String(repeating: "0123456789abcdef", count: 4096)  // 64 KiB
        var added = 0
        do {
            // Each notebook is closed before the next opens: LMDB wants one handle per process.
            let book = try Notebook(path: path, options: options)
            var failure: NotesError?
            while failure == nil && added < 200 {
                do {
                    try book.add(title: "note \(added)", body: body)
                    added += 1
                } catch {
                    failure = error
                }
            }
            let error = try #require(failure, "200 notes of 64 KiB fit under a 2 MiB cap")
            #expect(added >= 8, "the map grew until the cap: only \(added) notes fit")
            #expect(error.description.contains("size cap"), "\(error)")
            #expect(!error.description.contains("0123456789abcdef"), "the error echoes the body")
            var st = stat()
            #expect(stat(path + "/data.mdb", &st) == 0 && st.st_size <= 2 << 20, "data.mdb is \(st.st_size) bytes")
            #expect(try book.stats().events == UInt64(added), "the refused add left no event")
            #expect(try book.verify().isEmpty)
        }
        options.maxStoreBytes = 16 << 20
        let grown = try Notebook(path: path, options: options)
        for i in 0..<8 { try grown.add(title: "more \(i)", body: body) }
        #expect(try grown.stats().events == UInt64(added + 8))
        #expect(try grown.verify().isEmpty)
    }
}
