import Glibc
import NotesCLI

NotesCommandLine.reportFaultsAsDamage()
exit(NotesCommandLine.main())
