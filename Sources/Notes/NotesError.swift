public import Basics
public import EventStore
import SearchEngine

/// Errors of the notes domain: each case carries what went wrong as data, and its description
/// says it in words that belong to no interface. The command line adds what to type next and
/// maps each case to its exit code, in one table (`CLIError.from`).
public enum NotesError: Error, Sendable, CustomStringConvertible {
    /// Bad input: an empty title, a body over the limit, a duplicate category name...
    case validation(InvalidInput)
    /// No note, version or category matches.
    case notFound(Missing)
    /// A prefix matches several notes.
    case ambiguous(prefix: String, candidates: [(id: Identifier, title: String)])
    /// The note changed since the version the caller expected.
    case conflict(id: Identifier, expected: UInt64, actual: UInt64)
    /// The events would make a stream the fold cannot hold (an event of a note never created,
    /// a second creation); nothing was appended.
    case refused(FoldError)
    /// The store cannot be used (damaged, newer format, permissions, disk full...).
    case store(StoreError)
    /// A file outside the store could not be read or written (an import file, an export, a
    /// Markdown folder); the store was not changed.
    case io(IOFailure)

    public var description: String {
        switch self {
        case .validation(let v): return v.description
        case .notFound(let m): return m.description
        case .ambiguous(let prefix, let candidates):
            let list = candidates.prefix(10).map { "\(shortID($0.id)) \"\($0.title)\"" }.joined(separator: ", ")
            return "\"\(prefix)\" matches \(candidates.count) notes (\(list)); type more digits of the id"
        case .conflict(let id, let expected, let actual):
            // A version the note has not reached did not change "meanwhile" (before 2026-12-07
            // `--expect-version 999` of a note at v60 said it had).
            guard expected <= actual else {
                return "note \(shortID(id)) is at version \(actual), not \(expected): it has no version \(expected) yet"
            }
            return "note \(shortID(id)) is at version \(actual), not \(expected): it changed meanwhile"
        case .refused(let e): return "refused: \(e)"
        case .store(let e): return e.description
        case .io(let e): return e.description
        }
    }
}

/// Input the notebook refuses, with what is wrong with it.
public enum InvalidInput: Sendable, Equatable, CustomStringConvertible {
    case emptyTitle
    case titleTooLong(characters: Int, limit: Int)
    case titleNotOneLine
    case bodyTooLarge(bytes: Int, limit: Int)
    case bodyHasNUL
    /// The clock reads this instant, too far ahead of the machine's (``Notebook/Options/maximumClockLead``).
    case clockAhead(Int64)
    case emptyCategoryName
    case categoryNameTooLong(characters: Int, limit: Int)
    /// The name as given (trimmed), holding a control character.
    case categoryNameHasControlCharacter(String)
    /// A live category has the name already (names ignore case).
    case categoryExists(name: String)
    case emptyTagName
    case tagNameTooLong(characters: Int, limit: Int)
    /// The name as given (trimmed), holding a control character.
    case tagNameHasControlCharacter(String)
    /// A tag name with an empty part between slashes (`a//b`, `/a`, `a/`).
    case tagNameHasEmptyPart(String)
    /// A live tag has the name already (names ignore case).
    case tagExists(name: String)
    /// Text given as a note id that cannot be one.
    case notAnID(String)
    case nothingToUndo(Identifier)
    case unknownEventType(String, known: [String])
    /// Line `line` of an input (an import file) is refused, for `reason`; nothing was imported.
    case line(Int, reason: String)
    /// A file of an input (a Markdown folder) is refused, for `reason`; nothing was imported.
    case file(String, reason: String)
    /// Several files of a Markdown folder are refused (each with its reason); nothing was
    /// imported.
    case files([FileProblem])
    /// A property name that cannot be one.
    case badPropertyName(String)
    /// An alias that cannot be one (its first 60 characters), and why.
    case badAlias(String, reason: String)
    /// A file of an input names a note id whose stream holds no note (a damaged store).
    case streamWithoutNote(file: String, id: Identifier)
    /// A file name that cannot be a file: empty, or a directory.
    case emptyFileName
    case isDirectory(String)
    /// A file whose bytes cannot be read as what it claims (a damaged `.gz`).
    case damagedFile(String, reason: String)
    /// An export would replace one of the store's own files.
    case overwritesStore(String, store: String)
    /// A Markdown export would write `what` (a category's files, named `category`, or a note's
    /// file) into `folder`, which is the store's own folder (`itself`) or inside it.
    case exportIntoStore(folder: String, itself: Bool, what: String, category: String?, store: String)

    /// How to raise the body limit, for every message that names it.
    public static let raiseBodyLimit = "raise it with NOTES_BODY_LIMIT=BYTES or `notes config set body-limit BYTES`"

    public var description: String {
        switch self {
        case .emptyTitle: return "the title is empty; give a title with at least one visible character"
        case .titleTooLong(let n, let limit): return "the title has \(n) characters; the limit is \(limit)"
        case .titleNotOneLine: return "the title contains a line break or control character; titles are one line"
        case .bodyTooLarge(let n, let limit):
            return "the body is \(n) bytes; the limit is \(limit) (\(Self.raiseBodyLimit))"
        case .bodyHasNUL: return "the body contains a NUL character; notes hold text"
        case .clockAhead(let at):
            return "the clock reads \(RFC3339.format(micros: at)), more than a day ahead of this machine's; "
                + "a write at it would hold every later write of the store at that instant"
        case .emptyCategoryName: return "the category name is empty; give a name with at least one visible character"
        case .categoryNameTooLong(let n, let limit):
            return "the category name has \(n) characters; the limit is \(limit): give a shorter name"
        case .categoryNameHasControlCharacter(let name):
            return "the category name \"\(name)\" contains a control character (a line break, a tab...); "
                + "give a name on one line without them"
        case .categoryExists(let name): return "a category named \"\(name)\" exists already (names ignore case)"
        case .emptyTagName: return "the tag name is empty; give a name with at least one visible character"
        case .tagNameTooLong(let n, let limit):
            return "the tag name has \(n) characters; the limit is \(limit): give a shorter name"
        case .tagNameHasControlCharacter(let name):
            return "the tag name \"\(name)\" contains a control character (a line break, a tab...); "
                + "give a name on one line without them"
        case .tagNameHasEmptyPart(let name):
            return "the tag name \"\(name)\" has an empty part; nest tags as parent/child, with no empty part"
        case .tagExists(let name): return "a tag named \"\(name)\" exists already (names ignore case)"
        case .notAnID(let text): return "\"\(text)\" is not a note id; give at least 4 hex digits of an id"
        case .nothingToUndo(let id): return "nothing to undo: note \(shortID(id)) has only the command that created it"
        case .unknownEventType(let type, let known):
            return "unknown event type \"\(type)\"; use one of \(known.joined(separator: ", "))"
        case .line(let n, let reason): return "line \(n): \(reason); nothing was imported"
        case .file(let file, let reason): return "\(file): \(reason); nothing was imported"
        case .files(let problems):
            return problems.map { "\($0.file): \($0.reason)" }.joined(separator: "\n")
                + "\n\(problems.count) files are refused; nothing was imported (fix them, or give --skip-invalid)"
        case .badAlias(let alias, let reason):
            return "alias \"\(alias)\" cannot be one: \(reason); aliases are one line, like titles"
        case .badPropertyName(let key):
            return "property name \"\(key)\" is not one: give 1 to 100 characters without control characters"
        case .streamWithoutNote(let file, let id):
            return "\(file): the store has a stream for id \(id) but no note; nothing was imported"
        case .emptyFileName: return "the file name is empty; give a file, or - for standard input"
        case .isDirectory(let path): return "\(path) is a directory; give a file"
        case .damagedFile(let path, let reason): return "cannot decompress \(path): \(reason); check the file"
        case .overwritesStore(let path, let store):
            return "\(path) is a file of the store \(store): an export there would replace the store; "
                + "write it somewhere else"
        case .exportIntoStore(let folder, let itself, let what, let category, let store):
            return "\(folder) is \(itself ? "" : "inside ")the store's own folder (\(store)): \(what) would be written "
                + "into it; nothing was exported (export into a folder the store is not in"
                + (category.map { ", or rename the category \"\($0)\"" } ?? "") + ")"
        }
    }
}

/// A file refused by an import, and why.
public struct FileProblem: Error, Sendable, Equatable {
    public var file: String
    public var reason: String
    /// The file was listed but gone when it was read (an editor or a sync client saving it by
    /// removing it first): left out, never a reason to refuse an import.
    public var vanished = false
    /// The file was refused only for being over the size limit: when it is the file its note
    /// was imported from, unchanged, it is no reason to refuse an import (its digest is taken
    /// only then: the file may be of any size).
    public var oversized = false
    /// The note id the front matter of such a file names (`id`, as an export writes it), when its
    /// first bytes hold the whole front matter: a file that is, byte for byte, what the export
    /// writes for that note as it is, is no reason to refuse an import either.
    public var oversizedID: Identifier?

    public init(file: String, reason: String) {
        self.file = file
        self.reason = reason
    }
}

/// What was looked for and not found.
public enum Missing: Sendable, Equatable, CustomStringConvertible {
    case note(Identifier)
    /// No note id starts with these digits.
    case noteMatching(String)
    case category(name: String)
    case tag(name: String)
    /// The note has no such version (its versions run from 1 to `latest`).
    case version(UInt64, of: Identifier, latest: UInt64)
    /// The note did not exist yet at that instant.
    case noteBefore(Int64, Identifier)

    public var description: String {
        switch self {
        case .note(let id): return "no note has id \(id.uuidString.lowercased())"
        case .noteMatching(let text): return "no note matches \"\(text)\""
        case .category(let name): return "no category is named \"\(name)\""
        case .tag(let name): return "no tag is named \"\(name)\""
        case .version(let v, let id, let latest):
            return "note \(shortID(id)) has no version \(v) (versions run from 1 to \(latest))"
        case .noteBefore(let instant, let id):
            return "note \(shortID(id)) did not exist yet at \(RFC3339.format(micros: instant))"
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
        if let e = error as? FoldError { return .refused(e) }
        // The search index is a projection: damage to it is repaired as the others' is (it
        // was an "unexpected error", exit 1, without the advice to rebuild).
        if let e = error as? SearchIndexError {
            switch e {
            case .damaged(let what): return .store(.damagedProjection("the search index: \(what)"))
            case .inconsistent(let what):
                return .store(.damagedProjection("the search index disagrees with the notes: \(what)"))
            case .full: return .store(.damagedProjection("the search index ran out of document numbers"))
            }
        }
        if let e = error as? StoreError {
            if case .conflict(let stream, let expected, let actual) = e,
                case .note(let id) = StreamRef(stream)
            {
                if case .exact(let v) = expected { return .conflict(id: id, expected: v, actual: actual) }
            }
            return .store(e)
        }
        return .store(StoreError.wrap(error))
    }
}
