/// Concept pages for `notes help TOPIC`; the man page is generated from these and the
/// commands' own help, so the two cannot drift apart.
let helpTopics: [(name: String, title: String, text: String)] = [
    (
        "events", "Events and history",
        """
        Every action on a note (create, retitle, edit the body, pin, categorize, archive, trash,
        restore...) is an immutable event appended to a log. Nothing is updated in place or deleted:
        the notes you list and search are projections of the log, updated in the same transaction
        as each append. A note's version is the number of events in its stream (1 after creation).
        `notes history ID` shows each event of a note; `notes log` the whole audit log. Restore and
        undo are new events too, so history only ever grows. `notes verify` checks the log's
        checksums and SHA-256 hash chain and that every projection equals a replay of the log.
        """
    ),
    (
        "time-travel", "Time travel",
        """
        Any past state can be read back: `notes show ID --at 3` (after version 3) or
        `notes show ID --at "2 days ago"`; `notes list --as-of 2026-01-01` shows the whole notebook as
        it was then. Instants may be RFC 3339 (2026-11-29T12:00:00Z), YYYY-MM-DD, YYYY-MM-DDTHH:MM
        (local time), now, today, yesterday, "3 days ago", "2h ago", "last monday". A date is its local
        midnight, but as `notes log --until` it takes in the whole day. `now` is never before
        the log's last event (an import dated ahead of the clock); the relative forms count from the clock.
        `notes diff ID 3 5`, `notes blame ID` and `notes restore ID --to 3` work on versions or instants.
        """
    ),
    (
        "search", "Search syntax",
        """
        `notes search QUERY` finds notes whose title or body contain every word side by side (AND
        may be written). ham OR milk (or ham | milk) matches either; OR binds looser than AND, and
        (...) groups. "exact phrase" matches words in that order; prefix* matches words starting
        with prefix; -word, -"a phrase" and -(a OR b) exclude; title: and body: before a word,
        phrase or group match only there; tag:NAME and category:NAME filter the whole query. OR
        and AND are operators only in capitals. Case and accents are ignored (resume finds Résumé),
        and so are Hebrew points and Arabic harakat. Results are ranked by BM25; title matches
        count more, and a note's aliases are words of its title. When fewer notes than --limit match, words of 4+ letters also match near
        spellings (1 edit, 2 for 8+ letters), and notes with some of the words follow, ranked
        together below: more of the words as written first (a near spelling of a word the notes
        hold counts for nothing there, one of a word in no note for half a word), and a line says
        so; --exact turns that off.
        """
    ),
    (
        "import", "Import and export formats",
        """
        `notes export` writes every event as one JSON object per line (JSON Lines), oldest first:
        {"position", "eventId", "stream", "version", "type", "schemaVersion", "recordedAt",
        "metadata", "data"}; metadata has "actor" and, when present, "command", "causationId",
        "correlationId" and "writtenAt" (the writing device's own instant of a synced event: shown by
        `notes history`, never used for order). `notes import FILE` appends such events; event ids make
        it idempotent.
        `notes export-markdown DIR` / `notes import-markdown DIR` use a folder of .md files with front
        matter; `notes import-history FILE` converts a Git edit history (the swift-evolution corpus
        format) into notes.
        """
    ),
    (
        "exit-codes", "Exit codes",
        ExitCode.allCases.map { "\($0.rawValue)  \($0.meaning)" }.joined(separator: "\n")
    ),
    (
        "config", "Configuration",
        """
        Settings live in $XDG_CONFIG_HOME/notes/config (else ~/.config/notes/config), one
        `key = value` per line. A flag beats the environment, which beats the file, which beats the
        default. A bad value or a key set twice is an error (exit 2) naming the line; a key this
        version does not know (a typo, or one a newer version writes) is ignored with a warning on
        stderr naming the line, which `notes config unset KEY` removes. Keys:
        """ + "\n" + Config.keys.map { "  \($0.key): \($0.help)" }.joined(separator: "\n")
    ),
    (
        "environment", "Environment variables",
        """
        NOTES_STORE      the store directory (after --store)
        NOTES_ACTOR      who is recorded as the actor of each event (default user@host)
        NOTES_PAGER      the pager (else PAGER, else the config's pager, else less -FIRX)
        NOTES_BODY_LIMIT the largest body accepted, in bytes (default 1 MiB, at most 1 GiB)
        NOTES_NOW        pretend the current time is this RFC 3339 instant (reproducible demos, tests)
        NOTES_REMOTE     the remote log's address for `notes sync` (over the `remote` setting)
        NO_COLOR         never use color
        VISUAL, EDITOR   the editor of `notes edit`
        XDG_DATA_HOME, XDG_CONFIG_HOME, XDG_STATE_HOME  where the store, config and recovery files live
        """
    ),
]

/// The man page, in roff, built from the overview, every command's help and the topics.
func manPage() -> String {
    func esc(_ s: String) -> String {
        var out = ""
        for line in s.split(separator: "\n", omittingEmptySubsequences: false) {
            var l = String(line).replacing("\\", with: "\\e")
            if l.hasPrefix(".") || l.hasPrefix("'") { l = "\\&" + l }
            out += l + "\n"
        }
        return out
    }
    var out = ".TH NOTES 1 \"\" \"notes \(NotesCommandLine.version)\" \"User Commands\"\n"
    out += ".SH NAME\nnotes \\- keep notes from the terminal, with their whole history\n"
    out += ".SH SYNOPSIS\n.B notes\n[\\-\\-store DIR] [\\-\\-json] COMMAND [ARGS...]\n"
    out += ".SH DESCRIPTION\n.nf\n" + esc(NotesCommandLine.overviewHelp) + ".fi\n"
    out += ".SH COMMANDS\n"
    for c in allCommands {
        out += ".SS \(c.name)\n.nf\n" + esc(c.help) + ".fi\n"
    }
    for t in helpTopics {
        out += ".SH \(t.title.uppercased())\n.nf\n" + esc(t.text) + "\n.fi\n"
    }
    return out
}

let manCommand = Command(
    "man", abstract: "Print the manual page (roff); `notes man | man -l -` reads it.", usage: ["man"], readsOnly: true
) { ctx in
    try ctx.expectPositionals(0...0)
    ctx.terminal.pagerAllowed = false
    ctx.terminal.print(manPage(), terminator: "")
}
