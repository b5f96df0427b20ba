import Basics
import TestSupport
import Testing

@testable import EventStore

/// Damaged envelopes must throw `DecodingError` and never trap. Fixed seeds: every run checks
/// the same cases.
@Suite("Envelope: round trips and damaged input")
struct EnvelopeFuzzTests {
    struct Sample {
        var event: NewEvent
        var stream: String
        var version: UInt64
        var recordedAt: Int64
        var bytes: [UInt8]
        var digest: [UInt8]
    }

    static func randomText(_ rng: inout SeededGenerator, max: Int) -> String {
        let alphabet = Array("abcXYZ019 /-_.éß✓🙂")
        return String(
            (0..<Int.random(in: 0...max, using: &rng)).map { _ in alphabet.randomElement(using: &rng) ?? "a" })
    }

    static func sample(_ rng: inout SeededGenerator) -> Sample {
        let metadata = EventMetadata(
            actor: randomText(&rng, max: 12), command: Bool.random(using: &rng) ? randomText(&rng, max: 20) : nil,
            causationID: Bool.random(using: &rng) ? Identifier.random(using: &rng) : nil,
            correlationID: Bool.random(using: &rng) ? Identifier.random(using: &rng) : nil)
        let payload = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        var type = randomText(&rng, max: 16)
        if type.isEmpty { type = "T" }
        var event = NewEvent(
            id: Identifier.random(using: &rng), type: type, schemaVersion: UInt32.random(in: 0...300, using: &rng),
            payload: payload, metadata: metadata)
        let stream = "s/" + randomText(&rng, max: 20)
        let version = rng.next() >> UInt64.random(in: 0...63, using: &rng)
        let at = Int64(bitPattern: rng.next())
        let previous = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        // Half of them with the device's own instant: envelope format 2.
        if Bool.random(using: &rng) { event.metadata.writtenAt = Int64(bitPattern: rng.next()) }
        let (bytes, digest) = Envelope.encode(
            event, stream: stream, version: version, recordedAt: at, previousDigest: previous)
        return Sample(event: event, stream: stream, version: version, recordedAt: at, bytes: bytes, digest: digest)
    }

    /// Decodes `bytes`; returns the DecodingError if it threw.
    func decode(_ bytes: [UInt8]) -> (RecordedEvent?, DecodingError?) {
        bytes.withUnsafeBytes { p in
            do {
                return (try Envelope.view(p, position: 42).recorded, nil)
            } catch let error as DecodingError {
                return (nil, error)
            } catch {
                Issue.record("not a DecodingError: \(error)")
                return (nil, nil)
            }
        }
    }

    @Test("encoded envelopes decode to what was encoded")
    func roundTrip() throws {
        var rng = SeededGenerator(seed: 11)
        for _ in 0..<500 {
            let s = Self.sample(&rng)
            let (decoded, error) = decode(s.bytes)
            #expect(error == nil)
            let e = try #require(decoded)
            #expect(e.position == 42)
            #expect(e.id == s.event.id)
            #expect(e.type == s.event.type)
            #expect(e.schemaVersion == s.event.schemaVersion)
            #expect(e.stream == s.stream)
            #expect(e.version == s.version)
            #expect(e.recordedAt == s.recordedAt)
            #expect(e.metadata == s.event.metadata)
            #expect(e.payload == s.event.payload)
            #expect(e.digest == s.digest)
        }
    }

    @Test("every truncation throws")
    func truncations() {
        var rng = SeededGenerator(seed: 12)
        var cases = 0
        for _ in 0..<300 {
            let s = Self.sample(&rng)
            for length in 0..<s.bytes.count {
                let (decoded, error) = decode(Array(s.bytes[0..<length]))
                #expect(decoded == nil && error != nil, "prefix of \(length) bytes decoded")
                cases += 1
            }
        }
        #expect(cases > 30_000)
    }

    @Test("every single bit flip and every burst of up to 32 bits throws")
    func flips() {
        var rng = SeededGenerator(seed: 13)
        var cases = 0
        for _ in 0..<200 {
            let s = Self.sample(&rng)
            for bit in 0..<(s.bytes.count * 8) {
                var damaged = s.bytes
                damaged[bit / 8] ^= 1 << UInt8(bit % 8)
                let (decoded, error) = decode(damaged)
                #expect(decoded == nil && error != nil, "flip of bit \(bit) decoded")
                cases += 1
            }
            // CRC-32C detects every burst of at most 32 bits: scramble up to 4 adjacent bytes.
            for _ in 0..<100 {
                var damaged = s.bytes
                let start = Int.random(in: 0..<damaged.count, using: &rng)
                for i in start..<min(start + Int.random(in: 1...4, using: &rng), damaged.count) {
                    damaged[i] ^= UInt8.random(in: 1...255, using: &rng)
                }
                let (decoded, error) = decode(damaged)
                #expect(decoded == nil && error != nil, "burst at \(start) decoded")
                cases += 1
            }
        }
        #expect(cases > 100_000)
    }

    @Test("the header a walk reads is the envelope's, and every truncation or bit flip of it throws")
    func header() throws {
        var rng = SeededGenerator(seed: 15)
        func header(_ bytes: [UInt8]) -> EventHeaderFields? {
            bytes.withUnsafeBytes { p in
                (try? Envelope.header(p, position: 42)).map {
                    EventHeaderFields(
                        position: $0.position, recordedAt: $0.recordedAt, version: $0.version,
                        stream: String(decoding: $0.streamBytes, as: UTF8.self))
                }
            }
        }
        for _ in 0..<200 {
            let s = Self.sample(&rng)
            let h = try #require(header(s.bytes))
            #expect(
                h == EventHeaderFields(position: 42, recordedAt: s.recordedAt, version: s.version, stream: s.stream))
            for length in 0..<s.bytes.count { #expect(header(Array(s.bytes[0..<length])) == nil) }
            for bit in 0..<(s.bytes.count * 8) {
                var damaged = s.bytes
                damaged[bit / 8] ^= 1 << UInt8(bit % 8)
                #expect(header(damaged) == nil, "flip of bit \(bit) read")
            }
        }
    }

    struct EventHeaderFields: Equatable {
        var position: UInt64
        var recordedAt: Int64
        var version: UInt64
        var stream: String
    }

    /// Re-seals a damaged body with a valid CRC, so the structural checks behind the
    /// checksum are exercised.
    static func reseal(_ body: [UInt8]) -> [UInt8] {
        let crc = CRC32C.checksum(body)
        return body + [
            UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8),
            UInt8(truncatingIfNeeded: crc),
        ]
    }

    @Test("damage behind a valid checksum is a DecodingError or a consistent event, never a trap")
    func structuralDamage() {
        var rng = SeededGenerator(seed: 14)
        var threw = 0
        var decoded = 0
        let samples = (0..<500).map { _ in Self.sample(&rng) }
        for i in 0..<100_000 {
            var body = Array(samples[i % samples.count].bytes.dropLast(4))
            switch Int.random(in: 0..<5, using: &rng) {
            case 0:  // flip bits
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    let i = Int.random(in: 0..<body.count, using: &rng)
                    body[i] ^= 1 << UInt8.random(in: 0...7, using: &rng)
                }
            case 1:  // drop bytes
                let i = Int.random(in: 0..<body.count, using: &rng)
                body.removeSubrange(i..<min(body.count, i + Int.random(in: 1...8, using: &rng)))
            case 2:  // insert bytes
                let i = Int.random(in: 0...body.count, using: &rng)
                body.insert(
                    contentsOf: (0..<Int.random(in: 1...8, using: &rng)).map { _ in
                        UInt8.random(in: 0...255, using: &rng)
                    }, at: i)
            case 3:  // huge varint lengths and bad tags
                let i = Int.random(in: 0..<body.count, using: &rng)
                body.replaceSubrange(
                    i..<min(body.count, i + 1), with: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
            default:  // garbage of any length
                body = (0..<Int.random(in: 0...120, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            }
            let (event, error) = decode(Self.reseal(body))
            if error != nil {
                threw += 1
            } else if let event {
                decoded += 1
                // What decodes must hold together: the digest is the last 32 bytes of the body.
                #expect(event.digest == Array(body.suffix(32)))
            }
        }
        #expect(threw > 50_000)
        #expect(threw + decoded == 100_000)
    }
}
