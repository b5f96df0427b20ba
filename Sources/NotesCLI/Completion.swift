import Notes

/// Shell completion: `notes completion bash|zsh|fish` prints a script; the scripts ask
/// `notes __complete ids|categories|tags` for note ids (with titles), category and tag names,
/// read from the projections so a Tab press stays fast. Tag names are offered after `--tag` and
/// after the id of `tag` and `untag`.
extension Command {
    /// Whether the first argument is a note id (its usage reads `NAME ID ...`).
    var takesNoteID: Bool {
        usage.first.map { $0.split(separator: " ").dropFirst().first == "ID" } ?? false
    }

    var optionNames: [String] { (options + globalOptions).map { "--" + $0.name } }

    /// Whether the first argument is a path on disk, read from the usage (`import FILE|-`,
    /// `import-markdown DIR`): completed from the disk, not from the store.
    var pathArgument: PathKind? {
        usage.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { PathKind(valueName: $0) }
    }
}

/// A file, or a folder, that a command or an option takes (`--output FILE`, `--store DIR`).
enum PathKind {
    case file, directory

    init?(valueName: Substring) {
        switch valueName {
        case "FILE", "FILE|-", "PATH": self = .file
        case "DIR": self = .directory
        default: return nil
        }
    }
}

/// The options whose value is a path of the kind, as typed (`--output`, `-o`), over every command.
func pathOptionNames(_ kind: PathKind) -> [String] {
    var names: [String] = []
    for o in allCommands.flatMap(\.options) + globalOptions
    where o.value.flatMap({ PathKind(valueName: Substring($0)) }) == kind {
        for name in ["--" + o.name] + (o.short.map { ["-" + String($0)] } ?? []) where !names.contains(name) {
            names.append(name)
        }
    }
    return names
}

func completionScript(_ shell: String) throws(CLIError) -> String {
    let commands = (allCommands.map(\.name) + ["help"]).joined(separator: " ")
    let idCommands = allCommands.filter(\.takesNoteID).map(\.name)
    // A path is completed by the shell from the disk (before 2026-12-06 nothing was offered).
    let fileCommands = allCommands.filter { $0.pathArgument == .file }.map(\.name)
    let folderCommands = allCommands.filter { $0.pathArgument == .directory }.map(\.name)
    let fileOptions = pathOptionNames(.file)
    let folderOptions = pathOptionNames(.directory)
    switch shell {
    case "bash":
        var cases = ""
        for c in allCommands { cases += "        \(c.name)) opts=\"\(c.optionNames.joined(separator: " "))\" ;;\n" }
        return """
            # bash completion for notes; load with: source <(notes completion bash)
            # Names are offered quoted for the shell (`Home\\ Stuff`, one argument), from the store a
            # `--store DIR` on the line names.
            _notes_values() {
                local line want=$cur
                [[ $want == [\\\"\\\']* ]] && want=${want:1}
                want=${want//\\\\/}
                COMPREPLY=()
                while IFS= read -r line; do
                    [[ $1 == ids ]] && line=${line%%$'\\t'*}
                    [[ "$line" == "$want"* ]] && COMPREPLY+=("$(printf '%q' "$line")")
                done < <(notes "${store[@]}" __complete "$1" "$want" 2>/dev/null)
            }
            _notes() {
                local cur prev cmd opts i
                local -a store=()
                cur="${COMP_WORDS[COMP_CWORD]}"
                prev="${COMP_WORDS[COMP_CWORD-1]}"
                cmd=""
                for ((i = 1; i < COMP_CWORD; i++)); do
                    case "${COMP_WORDS[i]}" in
                        --store) ((i + 1 < COMP_CWORD)) && store=(--store "${COMP_WORDS[i+1]}"); ((i++)) ;;
                        -*) ;;
                        *) [[ -z "$cmd" ]] && cmd="${COMP_WORDS[i]}" ;;
                    esac
                done
                # A path: the shell's own completion of file or folder names (compopt, in bash 4).
                case "$prev" in
                    \(fileOptions.joined(separator: "|"))) compopt -o default 2>/dev/null; return ;;
                    \(folderOptions.joined(separator: "|"))) compopt -o dirnames 2>/dev/null; return ;;
                esac
                if [[ -z "$cmd" ]]; then
                    COMPREPLY=($(compgen -W "\(commands) --store --json --help" -- "$cur"))
                    return
                fi
                case "$cmd" in
            \(cases)        *) opts="--json --help" ;;
                esac
                if [[ "$prev" == "--category" || "$prev" == "-c" || ( "$cmd" == "categorize" && $COMP_CWORD -ge 3 && "$cur" != -* ) ]]; then
                    _notes_values categories
                    return
                fi
                if [[ "$prev" == "--tag" || ( ( "$cmd" == "tag" || "$cmd" == "untag" ) && $COMP_CWORD -ge 3 && "$cur" != -* ) ]]; then
                    _notes_values tags
                    return
                fi
                if [[ "$cur" == -* ]]; then
                    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
                    return
                fi
                case "$cmd" in
                    \(idCommands.joined(separator: "|"))) _notes_values ids ;;
                    \(fileCommands.joined(separator: "|"))) compopt -o default 2>/dev/null ;;
                    \(folderCommands.joined(separator: "|"))) compopt -o dirnames 2>/dev/null ;;
                esac
            }
            complete -F _notes notes

            """
    case "zsh":
        var cmdList = ""
        for c in allCommands { cmdList += "        '\(c.name):\(c.abstract.replacing("'", with: "'\\''"))'\n" }
        return """
            #compdef notes
            # zsh completion for notes; load with: source <(notes completion zsh)
            # Values come from the store a `--store DIR` on the line names; a colon in a name is
            # escaped for _describe, which takes `value:description`.
            _notes_ids() {
                local -a ids
                # Ids are hex (no colon to escape); the title after the tab is the description.
                ids=(${(f)"$(notes $_notes_store __complete ids "$PREFIX" 2>/dev/null | sed 's/\t/:/')"})
                _describe 'note' ids
            }
            _notes_categories() {
                local -a cats
                cats=(${(f)"$(notes $_notes_store __complete categories 2>/dev/null | sed 's/:/\\\\:/g')"})
                _describe 'category' cats
            }
            _notes_tags() {
                local -a tags
                tags=(${(f)"$(notes $_notes_store __complete tags 2>/dev/null | sed 's/:/\\\\:/g')"})
                _describe 'tag' tags
            }
            _notes() {
                local -a commands _notes_store
                commands=(
            \(cmdList)    )
                # The command is the first word that is not an option (nor --store's directory).
                local cmd='' i at=0
                for (( i = 2; i < CURRENT; i++ )); do
                    case ${words[i]} in
                        --store) (( i + 1 < CURRENT )) && _notes_store=(--store ${(Q)words[i+1]}); (( i++ )) ;;
                        -*) ;;
                        *) if [[ -z $cmd ]]; then cmd=${words[i]}; at=$i; fi ;;
                    esac
                done
                case ${words[CURRENT-1]} in
                    \(fileOptions.joined(separator: "|"))) _files; return ;;
                    \(folderOptions.joined(separator: "|"))) _files -/; return ;;
                esac
                if [[ -z $cmd ]]; then
                    if [[ ${words[CURRENT]} == -* ]]; then compadd -- --store --json --help; else _describe 'command' commands; fi
                    return
                fi
                if [[ ${words[CURRENT-1]} == (--category|-c) ]]; then
                    _notes_categories
                    return
                fi
                if [[ ${words[CURRENT-1]} == --tag ]]; then
                    _notes_tags
                    return
                fi
                if [[ ${words[CURRENT]} == -* ]]; then
                    local -a opts
                    case $cmd in
            \(allCommands.map { "            \($0.name)) opts=(\($0.optionNames.joined(separator: " "))) ;;" }.joined(separator: "\n"))
                    esac
                    compadd -- $opts
                    return
                fi
                case $cmd in
                    \(idCommands.joined(separator: "|")))
                        if (( CURRENT == at + 1 )); then _notes_ids; elif [[ $cmd == categorize ]]; then _notes_categories; elif [[ $cmd == (tag|untag) ]]; then _notes_tags; fi ;;
                    \(fileCommands.joined(separator: "|"))) _files ;;
                    \(folderCommands.joined(separator: "|"))) _files -/ ;;
                esac
            }
            compdef _notes notes 2>/dev/null

            """
    case "fish":
        var out = "# fish completion for notes; load with: notes completion fish | source\n"
        // Values come from the store a `--store DIR` on the line names.
        out += """
            function __notes_complete
                set -l words (commandline -opc)
                set -l store
                for i in (seq (count $words))
                    if test "$words[$i]" = --store; and test $i -lt (count $words)
                        set store --store $words[(math $i + 1)]
                    end
                end
                notes $store __complete $argv 2>/dev/null
            end
            # Whether no command is on the line yet (a --store's directory is none).
            function __notes_needs_command
                set -l words (commandline -opc)
                set -e words[1]
                set -l skip 0
                for w in $words
                    if test $skip = 1
                        set skip 0
                    else if test "$w" = --store
                        set skip 1
                    else if not string match -q -- '-*' $w
                        return 1
                    end
                end
                return 0
            end
            # Whether the word before the cursor is one of $argv (the command whose first
            # argument is being typed).
            function __notes_after
                set -l words (commandline -opc)
                contains -- "$words[-1]" $argv
            end
            # Whether the command is one of $argv and its note id is given (a tag name or a
            # category comes next).
            function __notes_after_id
                set -l words (commandline -opc)
                test (count $words) -ge 3; and not contains -- "$words[-1]" $argv; and contains -- "$words[-2]" $argv
            end

            """
        out += "complete -c notes -f\n"
        for c in allCommands {
            out +=
                "complete -c notes -n __notes_needs_command -a \(c.name) -d '\(c.abstract.replacing("'", with: "\\'"))'\n"
            for o in c.options {
                out +=
                    "complete -c notes -n '__fish_seen_subcommand_from \(c.name)' -l \(o.name) -d '\(o.help.replacing("'", with: "\\'"))'"
                // A category or tag is one of the store's names (no file names offered).
                switch o.name {
                case "category": out += " -x -a '(__notes_complete categories)'"
                case "tag": out += " -x -a '(__notes_complete tags)'"
                default: if o.value != nil { out += " -r" }
                }
                out += "\n"
            }
        }
        // A global option's value (`--store DIR`) is no command: fish must know it takes one.
        for o in globalOptions {
            out +=
                "complete -c notes -l \(o.name) -d '\(o.help.replacing("'", with: "\\'"))'\(o.value != nil ? " -r" : "")\n"
        }
        let ids = idCommands.joined(separator: " ")
        // `-F`: the file names that `complete -c notes -f` turned off for every other word.
        let pathCommands = (fileCommands + folderCommands).joined(separator: " ")
        out += "complete -c notes -n '__fish_seen_subcommand_from \(pathCommands)' -F\n"
        out += "complete -c notes -n '__notes_after \(ids)' -a '(__notes_complete ids (commandline -ct))'\n"
        out += "complete -c notes -n '__notes_after_id categorize' -a '(__notes_complete categories)'\n"
        out +=
            "complete -c notes -n '__fish_seen_subcommand_from tag untag; and not __notes_after tag untag' -a '(__notes_complete tags)'\n"
        return out
    default:
        throw CLIError("unknown shell \"\(shell)\"; use bash, zsh or fish")
    }
}

let completionCommand = Command(
    "completion", abstract: "Print a shell completion script (bash, zsh or fish).", usage: ["completion bash|zsh|fish"],
    discussion:
        "bash: source <(notes completion bash)   zsh: source <(notes completion zsh)   fish: notes completion fish | source",
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(1...1)
    ctx.terminal.pagerAllowed = false
    ctx.terminal.print(try completionScript(ctx.positionals[0]), terminator: "")
}

/// Hidden: values for the completion scripts. Quiet on any error (no store yet, etc.).
let completeCommand = Command(
    "__complete", abstract: "Values for shell completion (ids, categories, tags).",
    usage: ["__complete ids [DIGITS]|categories|tags"],
    readsOnly: true
) { ctx in
    ctx.terminal.pagerAllowed = false
    guard let what = ctx.positionals.first else { return }
    guard let book = try? ctx.notebook() else { return }
    switch what {
    case "ids":
        // The digits typed (the scripts pass the word being completed): the notes whose id starts
        // with them, of every status. Without them, the latest page of `notes list`. Before
        // 2026-12-07 that page was all a Tab offered: in a store of more than 500 notes most ids
        // completed to nothing, and `untrash` never offered a note in the trash.
        let typed = String(ctx.positionals.dropFirst().first?.lowercased().filter { $0 != "-" } ?? "")
        let rows: [NoteRow]?
        if !typed.isEmpty && typed.count <= 32 && typed.allSatisfy(\.isHexDigit) {
            rows = try? book.rows(withIDPrefix: typed, limit: 500)
        } else {
            var q = ListQuery()
            q.limit = 500
            rows = try? book.listRows(q)
        }
        for n in rows ?? [] { ctx.terminal.print(shortID(n.id) + "\t" + truncate(n.title, 60)) }
    case "categories":
        for c in (try? book.categories()) ?? [] { ctx.terminal.print(c.name) }
    case "tags":
        for t in (try? book.allTags()) ?? [] { ctx.terminal.print(t.name) }
    default:
        return
    }
}
