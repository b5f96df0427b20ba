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
    /// No note, version, category or tag matches, or an id prefix is ambiguous; or there is no
    /// store yet.
    case notFound = 3
    /// The note changed since the expected version; nothing was overwritten.
    case conflict = 4
    /// The store cannot be used: damaged, newer format, locked out, permissions.
    case storeUnusable = 5
    /// `notes sync` could not reach the remote log, or lost it midway; nothing is lost: the
    /// outbox stays for the next sync.
    case remoteUnreachable = 6

    public var meaning: String {
        switch self {
        case .success: return "success"
        case .failure:
            return "other failure (for example a full disk, a file that cannot be read or written, a failing editor)"
        case .usage: return "usage or validation error (bad arguments or input); nothing was changed"
        case .notFound:
            // Before 2026-12-07 the help left out the store that is not there yet, which every
            // command but those that make notes from nothing exits 3 for.
            return "no note, version, category or tag matches, or an id prefix is ambiguous; or there is no store yet"
        case .conflict: return "conflict: the note changed since the expected version; nothing was overwritten"
        case .storeUnusable:
            return
                "the store is unusable (damaged, newer format, locked out, permissions), or sync refused: the logs diverged, the remote log damaged, another notebook, a role without the grants, an event too large for the remote"
        case .remoteUnreachable:
            return "sync could not reach the remote log or lost it midway; the outbox is kept for the next sync"
        }
    }
}

/// A failure the CLI reports as one line on stderr with an exit code.
public struct CLIError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public let code: ExitCode
    /// Lines printed after the message, each an error line of its own (each refused file of an
    /// import): every one is kept on one line whatever it quotes, as the message is.
    public let details: [String]

    public init(_ message: String, code: ExitCode = .usage, details: [String] = []) {
        self.message = message
        self.code = code
        self.details = details
    }

    public var description: String { message }

    /// The one table from an error to the line the user reads and the exit code: the domain's
    /// description, and what to type next where the command line knows it.
    static func from(_ error: any Error) -> CLIError {
        switch error {
        case let e as CLIError: return e
        case let e as NotesError:
            switch e {
            case .validation(let input):
                switch input {
                case .bodyTooLarge(let n, let limit) where limit == Context.remoteBodyLimit:
                    // Raising the setting does nothing while a remote is set.
                    return CLIError(
                        "the body is \(n) bytes; while a remote is set the limit is \(limit), half of what the remote "
                            + "holds of one event (a conflict keeps two bodies): split the note")
                case .notAnID: return CLIError(e.description + " (see `notes list`)")
                case .clockAhead: return CLIError(e.description + " (NOTES_NOW sets it: unset NOTES_NOW)")
                case .streamWithoutNote: return CLIError(e.description + " (run `notes verify`)")
                case .files(let problems):
                    // One line per refused file, then the verdict.
                    return CLIError(
                        "\(problems.count) files are refused; nothing was imported (fix them, or give --skip-invalid)",
                        details: problems.map { "\($0.file): \($0.reason)" })
                default: return CLIError(e.description, code: .usage)
                }
            case .notFound(let missing):
                switch missing {
                case .note, .noteMatching: return CLIError(e.description + "; try `notes list --all`", code: .notFound)
                case .category: return CLIError(e.description + "; see `notes categories`", code: .notFound)
                case .tag: return CLIError(e.description + "; see `notes tags`", code: .notFound)
                case .version, .noteBefore: return CLIError(e.description, code: .notFound)
                }
            case .ambiguous: return CLIError(e.description, code: .notFound)
            case .conflict(let id, _, _):
                return CLIError(e.description + "; run `notes show \(shortID(id))` and try again", code: .conflict)
            case .refused: return CLIError(e.description, code: .usage)
            case .store(let s): return from(s)
            case .io: return CLIError(e.description, code: .failure)
            }
        case let e as StoreError:
            switch e {
            case .conflict: return CLIError(e.description, code: .conflict)
            case .invalidStreamName, .invalidEventType, .duplicateEventID: return CLIError(e.description, code: .usage)
            case .rebuildSuperseded, .projectionsChanged, .unexpected: return CLIError(e.description, code: .failure)
            case .storage(let l) where l.isOutOfSpace || l.code == .outOfMemory:
                return CLIError(e.description, code: .failure)
            case .storage(let l) where l.code == .readOnlyFileSystem:
                return CLIError(e.description + "; choose a writable store with --store", code: .storeUnusable)
            case .damaged:
                return CLIError(e.description + "; run `notes verify` to see what is affected", code: .storeUnusable)
            case .damagedProjection:
                return CLIError(e.description + "; run `notes rebuild` to repair them", code: .storeUnusable)
            case .notAStore: return CLIError(e.description + "; choose another path with --store", code: .storeUnusable)
            case .projectionsNotBuilt:
                return CLIError(
                    e.description
                        + ": open the store once with write access, or a copy of its folder (`cp -a`) with --store; "
                        + "`notes export` and `notes log` read its events as they are",
                    code: .storeUnusable)
            case .unusableDataFile:
                return CLIError(e.description + ", or choose another store with --store", code: .storeUnusable)
            default: return CLIError(e.description, code: .storeUnusable)
            }
        case let e as FoldError:
            return from(NotesError.refused(e))
        case let e as SyncError:
            switch e {
            case .store(let s): return from(s)
            case .remote(let r): return from(r)
            case .ownHistory: return CLIError(e.description, code: .usage)
            case .tooManyRounds: return CLIError(e.description, code: .failure)
            case .otherNotebook, .diverged, .invalidRemoteEvent, .oversizedEvent:
                return CLIError(e.description, code: .storeUnusable)
            }
        case let e as RemoteLogError:
            switch e {
            case .unreachable, .connectionLost, .timedOut:
                return CLIError(e.description + " (the outbox is kept)", code: .remoteUnreachable)
            case .invalidAddress: return CLIError(e.description + "; see `notes remote show`", code: .usage)
            case .authenticationFailed, .noDatabase, .permissionDenied, .schemaMissing, .schemaOutdated, .schemaTooNew,
                .readOnly, .damaged:
                return CLIError(e.description, code: .storeUnusable)
            case .conflict, .invalidBatch, .server, .malformedReply: return CLIError(e.description, code: .failure)
            }
        default:
            return CLIError("\(error)", code: .failure)
        }
    }
}
