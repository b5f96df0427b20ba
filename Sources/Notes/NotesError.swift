public import Basics
public import EventStore

/// Errors of the notes domain. Each message names the problem and the next step; the CLI maps
/// each case to a documented exit code.
public enum NotesError: Error, Sendable, CustomStringConvertible {
    /// Bad input: an empty title, a body over the limit, a duplicate category name...
    case validation(String)
    /// No note or category matches.
    case notFound(String)
    /// A prefix matches several notes.
    case ambiguous(prefix: String, candidates: [(id: Identifier, title: String)])
    /// The note changed since the version the caller expected.
    case conflict(id: Identifier, expected: UInt64, actual: UInt64)
    /// The store cannot be used (damaged, newer format, permissions, disk full...).
    case store(StoreError)
    /// A file outside the store could not be read or written (an import file, an export, a
    /// Markdown folder); the store was not changed.
    case io(IOFailure)

    public var description: String {
        switch self {
        case .validation(let m): return m
        case .notFound(let m): return m
        case .ambiguous(let prefix, let candidates):
            let list = candidates.prefix(10).map { "\(shortID($0.id)) \"\($0.title)\"" }.joined(separator: ", ")
            return "\"\(prefix)\" matches \(candidates.count) notes (\(list)); type more digits of the id"
        case .conflict(let id, let expected, let actual):
            return
                "note \(shortID(id)) is at version \(actual), not \(expected): it changed meanwhile; run `notes show \(shortID(id))` and try again"
        case .store(let e): return e.description
        case .io(let e): return e.description
        }
    }
}

/// Runs `body`, reporting a failure to read or write a file outside the store as ``NotesError/io(_:)``.
package func io<R>(_ body: () throws(IOFailure) -> R) throws(NotesError) -> R {
    do { return try body() } catch { throw .io(error) }
}

/// The 8-hex-digit form of an id that people see.
public func shortID(_ id: Identifier) -> String { String(id.hex.prefix(8)) }

extension NotesError {
    package static func wrap(_ error: any Error) -> NotesError {
        if let e = error as? NotesError { return e }
        if let e = error as? IOFailure { return .io(e) }
        if let e = error as? StoreError {
            if case .conflict(let stream, let expected, let actual) = e,
                let id = NotesProjection.id(in: stream, kind: "note/")
            {
                if case .exact(let v) = expected { return .conflict(id: id, expected: v, actual: actual) }
            }
            return .store(e)
        }
        return .store(StoreError.wrap(error))
    }
}
