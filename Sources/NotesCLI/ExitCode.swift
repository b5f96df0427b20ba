import EventStore
import Notes

/// The exit codes of `notes`, documented in `--help`, `notes help exit-codes` and the README.
public enum ExitCode: Int32, Sendable, CaseIterable {
    case success = 0
    /// Any other failure (e.g. disk full, a file that cannot be read or written, an editor that
    /// failed).
    case failure = 1
    /// A usage or validation error: bad arguments or input. Nothing was changed.
    case usage = 2
    /// No note or category matches, or an id prefix is ambiguous.
    case notFound = 3
    /// The note changed since the expected version; nothing was overwritten.
    case conflict = 4
    /// The store cannot be used: damaged, newer format, locked out, permissions.
    case storeUnusable = 5

    public var meaning: String {
        switch self {
        case .success: return "success"
        case .failure:
            return "other failure (for example a full disk, a file that cannot be read or written, a failing editor)"
        case .usage: return "usage or validation error (bad arguments or input); nothing was changed"
        case .notFound: return "no note or category matches, or an id prefix is ambiguous"
        case .conflict: return "conflict: the note changed since the expected version; nothing was overwritten"
        case .storeUnusable: return "the store is unusable (damaged, newer format, locked out, permissions)"
        }
    }
}

/// A failure the CLI reports as one line on stderr with an exit code.
public struct CLIError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public let code: ExitCode

    public init(_ message: String, code: ExitCode = .usage) {
        self.message = message
        self.code = code
    }

    public var description: String { message }

    static func from(_ error: any Error) -> CLIError {
        switch error {
        case let e as CLIError: return e
        case let e as NotesError:
            switch e {
            case .validation: return CLIError(e.description, code: .usage)
            case .notFound, .ambiguous: return CLIError(e.description, code: .notFound)
            case .conflict: return CLIError(e.description, code: .conflict)
            case .store(let s): return from(s)
            case .io: return CLIError(e.description, code: .failure)
            }
        case let e as StoreError:
            switch e {
            case .conflict: return CLIError(e.description, code: .conflict)
            case .invalidArgument: return CLIError(e.description, code: .usage)
            case .rebuildSuperseded: return CLIError(e.description, code: .failure)
            case .storage(let l) where l.isOutOfSpace: return CLIError(e.description, code: .failure)
            default: return CLIError(e.description, code: .storeUnusable)
            }
        default:
            return CLIError("\(error)", code: .failure)
        }
    }
}
