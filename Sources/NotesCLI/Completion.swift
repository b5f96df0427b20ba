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
}

func completionScript(_ shell: String) throws(CLIError) -> String {
    let commands = (allCommands.map(\.name) + ["help"]).joined(separator: " ")
    let idCommands = allCommands.filter(\.takesNoteID).map(\.name)
    switch shell {
    case "bash":
        var cases = ""
        for c in allCommands { cases += "        \(c.name)) opts=\"\(c.optionNames.joined(separator: " "))\" ;;\n" }
        return """
            # bash completion for notes; load with: source <(notes completion bash)
            _notes() {
                local cur prev cmd opts i
                cur="${COMP_WORDS[COMP_CWORD]}"
                prev="${COMP_WORDS[COMP_CWORD-1]}"
                cmd=""
                for ((i = 1; i < COMP_CWORD; i++)); do
                    case "${COMP_WORDS[i]}" in
                        --store) ((i++)) ;;
                        -*) ;;
                        *) cmd="${COMP_WORDS[i]}"; break ;;
                    esac
                done
                if [[ -z "$cmd" ]]; then
                    COMPREPLY=($(compgen -W "\(commands) --store --json --help" -- "$cur"))
                    return
                fi
                case "$cmd" in
            \(cases)        *) opts="--json --help" ;;
                esac
                if [[ "$prev" == "--category" || "$prev" == "-c" || ( "$cmd" == "categorize" && $COMP_CWORD -ge 3 ) ]]; then
                    local IFS=$'\\n'
                    COMPREPLY=($(compgen -W "$(notes __complete categories 2>/dev/null)" -- "$cur"))
                    return
                fi
                if [[ "$prev" == "--tag" || ( ( "$cmd" == "tag" || "$cmd" == "untag" ) && $COMP_CWORD -ge 3 ) ]]; then
                    local IFS=$'\\n'
                    COMPREPLY=($(compgen -W "$(notes __complete tags 2>/dev/null)" -- "$cur"))
                    return
                fi
                if [[ "$cur" == -* ]]; then
                    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
                    return
                fi
                case "$cmd" in
                    \(idCommands.joined(separator: "|")))
                        COMPREPLY=($(compgen -W "$(notes __complete ids 2>/dev/null | cut -f1)" -- "$cur")) ;;
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
            _notes_ids() {
                local -a ids
                # Ids are hex (no colon to escape); the title after the tab is the description.
                ids=(${(f)"$(notes __complete ids 2>/dev/null | sed 's/\\t/:/')"})
                _describe 'note' ids
            }
            _notes_categories() {
                local -a cats
                cats=(${(f)"$(notes __complete categories 2>/dev/null)"})
                _describe 'category' cats
            }
            _notes_tags() {
                local -a tags
                tags=(${(f)"$(notes __complete tags 2>/dev/null | sed 's/:/\\\\:/g')"})
                _describe 'tag' tags
            }
            _notes() {
                local -a commands
                commands=(
            \(cmdList)    )
                if (( CURRENT == 2 )); then
                    _describe 'command' commands
                    return
                fi
                local cmd=${words[2]}
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
                        if (( CURRENT == 3 )); then _notes_ids; elif [[ $cmd == categorize ]]; then _notes_categories; elif [[ $cmd == (tag|untag) ]]; then _notes_tags; fi ;;
                esac
            }
            compdef _notes notes 2>/dev/null

            """
    case "fish":
        var out = "# fish completion for notes; load with: notes completion fish | source\n"
        out += "complete -c notes -f\n"
        for c in allCommands {
            out +=
                "complete -c notes -n __fish_use_subcommand -a \(c.name) -d '\(c.abstract.replacing("'", with: "\\'"))'\n"
            for o in c.options {
                out +=
                    "complete -c notes -n '__fish_seen_subcommand_from \(c.name)' -l \(o.name) -d '\(o.help.replacing("'", with: "\\'"))'"
                if o.value != nil { out += " -r" }
                out += "\n"
            }
        }
        for o in globalOptions { out += "complete -c notes -l \(o.name) -d '\(o.help.replacing("'", with: "\\'"))'\n" }
        out +=
            "complete -c notes -n '__fish_seen_subcommand_from \(idCommands.joined(separator: " "))' -a '(notes __complete ids 2>/dev/null)'\n"
        out += "complete -c notes -l category -a '(notes __complete categories 2>/dev/null)'\n"
        out += "complete -c notes -l tag -a '(notes __complete tags 2>/dev/null)'\n"
        out +=
            "complete -c notes -n '__fish_seen_subcommand_from tag untag; and test (count (commandline -opc)) -ge 3' -a '(notes __complete tags 2>/dev/null)'\n"
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
    usage: ["__complete ids|categories|tags"],
    readsOnly: true
) { ctx in
    ctx.terminal.pagerAllowed = false
    guard let what = ctx.positionals.first else { return }
    guard let book = try? ctx.notebook() else { return }
    switch what {
    case "ids":
        var q = ListQuery()
        q.limit = 500
        for n in (try? book.listRows(q)) ?? [] { ctx.terminal.print(shortID(n.id) + "\t" + truncate(n.title, 60)) }
    case "categories":
        for c in (try? book.categories()) ?? [] { ctx.terminal.print(c.name) }
    case "tags":
        for t in (try? book.allTags()) ?? [] { ctx.terminal.print(t.name) }
    default:
        return
    }
}
