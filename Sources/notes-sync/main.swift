// `notes sync` runs this program: `notes` with a remote log in PostgreSQL. It links libpq, which
// `notes` itself does not, so that no other command pays for loading it.
import EventStore
import Glibc
import NotesCLI
import PostgresLog

RemoteConnector.connect = { (address: String) throws(RemoteLogError) in
    try PostgresEventLog(connecting: address)
}
NotesCommandLine.reportFaultsAsDamage()
exit(NotesCommandLine.main())
