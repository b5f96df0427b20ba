/// Every subcommand, in the order `notes --help` lists them.
let allCommands: [Command] = [
    addCommand, showCommand, editCommand, listCommand, searchCommand,
    pinCommand, unpinCommand, categorizeCommand, archiveCommand, unarchiveCommand, trashCommand, untrashCommand,
    tagCommand, untagCommand, categoriesCommand, tagsCommand, linksCommand, backlinksCommand, aliasCommand,
    statsCommand, remoteCommand, syncCommand, conflictsCommand,
    historyCommand, diffCommand, blameCommand, restoreCommand, undoCommand, logCommand,
    verifyCommand, rebuildCommand, migrationsCommand, upgradeCommand,
    configCommand, completionCommand, manCommand,
    exportCommand, importCommand, exportMarkdownCommand, importMarkdownCommand, importHistoryCommand,
]

/// The command called `name`. A switch, not a search of ``allCommands``: each command is a
/// global initialized on first use, and a process runs one command, so it builds only that one
/// (building all 41 took a quarter of `notes --version`'s instructions; `TableWidthTests`'s
/// `commandsByName` checks that each name here is its command's).
func findCommand(_ name: String) -> Command? {
    switch name {
    case "help": return helpCommand
    case "__complete": return completeCommand
    case "add": return addCommand
    case "show": return showCommand
    case "edit": return editCommand
    case "list": return listCommand
    case "search": return searchCommand
    case "pin": return pinCommand
    case "unpin": return unpinCommand
    case "categorize": return categorizeCommand
    case "archive": return archiveCommand
    case "unarchive": return unarchiveCommand
    case "trash": return trashCommand
    case "untrash": return untrashCommand
    case "tag": return tagCommand
    case "untag": return untagCommand
    case "categories": return categoriesCommand
    case "tags": return tagsCommand
    case "links": return linksCommand
    case "backlinks": return backlinksCommand
    case "alias": return aliasCommand
    case "stats": return statsCommand
    case "remote": return remoteCommand
    case "sync": return syncCommand
    case "conflicts": return conflictsCommand
    case "history": return historyCommand
    case "diff": return diffCommand
    case "blame": return blameCommand
    case "restore": return restoreCommand
    case "undo": return undoCommand
    case "log": return logCommand
    case "verify": return verifyCommand
    case "rebuild": return rebuildCommand
    case "migrations": return migrationsCommand
    case "upgrade": return upgradeCommand
    case "config": return configCommand
    case "completion": return completionCommand
    case "man": return manCommand
    case "export": return exportCommand
    case "import": return importCommand
    case "export-markdown": return exportMarkdownCommand
    case "import-markdown": return importMarkdownCommand
    case "import-history": return importHistoryCommand
    default: return nil
    }
}
