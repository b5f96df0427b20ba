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

func findCommand(_ name: String) -> Command? {
    if name == "help" { return helpCommand }
    if name == "__complete" { return completeCommand }
    return allCommands.first { $0.name == name }
}
