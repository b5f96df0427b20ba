import Glibc
import NotesCLI

exit(NotesCommandLine.main())
