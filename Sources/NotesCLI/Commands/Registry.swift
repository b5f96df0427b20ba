/// Every subcommand, in the order `notes --help` lists them.
let allCommands: [Command] = [
    addCommand, showCommand, editCommand, listCommand,
    pinCommand, unpinCommand, categorizeCommand, archiveCommand, unarchiveCommand, trashCommand, untrashCommand,
    categoriesCommand, statsCommand,
    historyCommand, diffCommand, blameCommand, restoreCommand, undoCommand, logCommand,
    verifyCommand, rebuildCommand, migrationsCommand, upgradeCommand,
    exportCommand, importCommand, exportMarkdownCommand, importMarkdownCommand, importHistoryCommand,
]

func findCommand(_ name: String) -> Command? {
    allCommands.first { $0.name == name } ?? (name == "help" ? helpCommand : nil)
}
