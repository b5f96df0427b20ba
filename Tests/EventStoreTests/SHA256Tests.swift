import TestSupport
import Testing

@testable import EventStore

@Suite("SHA256")
struct SHA256Tests {
    @Test("updates split anywhere equal one update, and a copied hasher goes on on its own, every length")
    func incrementalAndCopies() {
        var rng = SeededGenerator(seed: 256)
        let data = (0..<5000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        for length in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 200, 243, 1000, 4097, 5000] {
            let message = Array(data[0..<length])
            var split = SHA256()
            var whole = SHA256()
            let at = length == 0 ? 0 : Int(rng.next() % UInt64(length))
            split.update(Array(message[0..<at]))
            // The hasher is a value: a copy taken midway finishes the prefix alone.
            let prefix = split
            split.update(Array(message[at...]))
            whole.update(message)
            #expect(split.finalize() == whole.finalize(), "length \(length), split at \(at)")
            #expect(prefix.finalize() == SHA256.hash(Array(message[0..<at])), "length \(length), prefix \(at)")
        }
    }

    private static func hexHash(_ text: String) -> String {
        SHA256.hex(SHA256.hash(Array(text.utf8)))
    }

    @Test("FIPS 180-4 example vectors")
    func standardVectors() {
        #expect(Self.hexHash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Self.hexHash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Self.hexHash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            Self.hexHash(
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
            ) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    }

    @Test("one million 'a' characters, fed in uneven pieces")
    func millionA() {
        var hasher = SHA256()
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 997)
        var remaining = 1_000_000
        while remaining > 0 {
            let count = min(piece.count, remaining)
            hasher.update(Array(piece[0..<count]))
            remaining -= count
        }
        #expect(SHA256.hex(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        let oneShot = SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
        #expect(SHA256.hex(oneShot) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Lengths around the padding boundaries (55/56 bytes leave room for the length or not).
    @Test(
        "padding boundaries",
        arguments: [
            (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
            (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
            (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
            (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
            (65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
            (119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
            (120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"),
            (128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"),
        ])
    func paddingBoundaries(length: Int, expected: String) {
        #expect(SHA256.hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: length))) == expected)
    }

    @Test("every byte value")
    func allByteValues() {
        let bytes = (0..<1024).map { UInt8(truncatingIfNeeded: $0) }
        #expect(SHA256.hex(SHA256.hash(bytes)) == "785b0751fc2c53dc14a4ce3d800e69ef9ce1009eb327ccf458afe09c242c26c9")
        let viaBuffer = bytes.withUnsafeBytes { SHA256.hash($0) }
        #expect(viaBuffer == SHA256.hash(bytes))
    }

    @Test("incremental updates in random chunk sizes equal one-shot hashing")
    func incrementalMatchesOneShot() {
        var random = SeededGenerator(seed: 0x5EED_5A25)
        for length in Array(0...300) + [1000, 4096, 10_007] {
            let message = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let expected = SHA256.hash(message)
            for _ in 0..<3 {
                var hasher = SHA256()
                var start = 0
                while start < length {
                    let size = min(Int(random.next() % 150), length - start)
                    message[start..<(start + size)].withUnsafeBytes { hasher.update($0) }
                    start += size
                }
                #expect(hasher.finalize() == expected, "length \(length)")
            }
        }
    }

    @Test("empty updates, strings and the digest size")
    func edges() {
        var hasher = SHA256()
        hasher.update(UnsafeRawBufferPointer(start: nil, count: 0))
        hasher.update([])
        hasher.update("ab")
        hasher.update("")
        hasher.update(Array("c".utf8))
        let digest = hasher.finalize()
        #expect(digest.count == SHA256.digestByteCount)
        #expect(SHA256.hex(digest) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("hex rendering")
    func hex() {
        #expect(SHA256.hex([]) == "")
        #expect(SHA256.hex([0x00, 0x0F, 0xA0, 0xFF]) == "000fa0ff")
    }
}
