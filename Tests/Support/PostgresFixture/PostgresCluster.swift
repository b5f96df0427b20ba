import Basics
import FoundationEssentials
import Glibc
import PostgresLog
import Synchronization

/// A throwaway PostgreSQL cluster for the tests and the benchmarks: `initdb` into a temporary
/// directory, a server listening only on a Unix socket in it, run as a non-root user (`runuser -u
/// postgres` when they run as root, since initdb refuses root), stopped and removed at the end.
///
/// One cluster serves a whole test suite; each test uses its own notebook, or its own database
/// when it changes the schema.
public final class PostgresCluster: Sendable {
    /// The directory of `initdb` and `pg_ctl`: the newest `/usr/lib/postgresql/*/bin` holding both.
    public static let binDirectory: String? = {
        guard let versions = try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql") else {
            return nil
        }
        let dirs = versions.compactMap { Int($0) }.sorted(by: >).map { "/usr/lib/postgresql/\($0)/bin" }
        return dirs.first { access($0 + "/initdb", X_OK) == 0 && access($0 + "/pg_ctl", X_OK) == 0 }
    }()

    public static let skipReason =
        "PostgreSQL is not installed (no initdb and pg_ctl under /usr/lib/postgresql/*/bin); scripts/setup-deps.sh installs it"

    /// The role of the server's processes when the tests run as root.
    public static let serverUser = "postgres"
    /// The socket's port number: the socket directory is private, so any number is free.
    public static let port = 5432
    /// A role that must log in with a password (scram-sha-256), for the tests of libpq's password file.
    public static let passwordRole = "notes_pw"
    public static let passwordOfRole = "s3cret-Pa55"

    public let root: String
    /// The directory of the server's programs (`psql` is there too).
    public let bin: String
    public var socketDirectory: String { root + "/socket" }
    public var dataDirectory: String { root + "/data" }
    /// A libpq password file holding the password of ``passwordRole``.
    public var passwordFile: String { root + "/pgpass" }
    private let databases = Mutex(0)

    /// The libpq address of `database` as the cluster's superuser.
    public func address(_ database: String = "notes", user: String = PostgresCluster.serverUser) -> String {
        "host=\(socketDirectory) port=\(PostgresCluster.port) user=\(user) dbname=\(database)"
    }

    /// Creates, starts and prepares the cluster: a database `notes` with the log's schema, and the
    /// password role. Removes what it made when any step fails.
    /// Whether the server flushes its writes to the disk (as a real one does): for benchmarks.
    public let durable: Bool

    public init(durable: Bool = false) throws {
        self.durable = durable
        guard let bin = PostgresCluster.binDirectory else { throw ClusterError("no PostgreSQL binaries") }
        self.bin = bin
        var template = Array("/tmp/notes-pg.XXXXXX".utf8CString)
        let made: String? = template.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress, let result = mkdtemp(base) else { return nil }
            return String(cString: result)
        }
        guard let made else { throw ClusterError("mkdtemp failed: errno \(errno)") }
        root = made
        PostgresCluster.removeAbandoned(bin: bin, except: made)
        do {
            try start()
        } catch {
            stop()
            throw error
        }
    }

    /// Stops and removes the clusters of test processes that ended without removing theirs
    /// (killed, or crashed): each records its process id in `owner`.
    private static func removeAbandoned(bin: String, except: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/tmp") else { return }
        for name in names where name.hasPrefix("notes-pg.") {
            let dir = "/tmp/" + name
            guard dir != except,
                let text = FileManager.default.contents(atPath: dir + "/owner").map({
                    String(decoding: $0, as: UTF8.self)
                }),
                let pid = text.split(whereSeparator: \.isWhitespace).first.flatMap({ Int32($0) }),
                kill(pid, 0) == -1, errno == ESRCH
            else { continue }
            if access(dir + "/data/postmaster.pid", F_OK) == 0 {
                try? run(
                    [bin + "/pg_ctl", "-D", dir + "/data", "-m", "immediate", "-s", "-w", "stop"], log: "/dev/null")
            }
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    private func start() throws {
        guard FileManager.default.createFile(atPath: root + "/owner", contents: Data("\(getpid())\n".utf8)) else {
            throw ClusterError("cannot write \(root)/owner")
        }
        let passfile = "*:*:*:\(PostgresCluster.passwordRole):\(PostgresCluster.passwordOfRole)\n"
        guard FileManager.default.createFile(atPath: passwordFile, contents: Data(passfile.utf8)),
            chmod(passwordFile, 0o600) == 0
        else { throw ClusterError("cannot write \(passwordFile)") }
        guard mkdir(socketDirectory, 0o700) == 0 else { throw ClusterError("mkdir \(socketDirectory): errno \(errno)") }
        if geteuid() == 0 {
            guard let pw = getpwnam(PostgresCluster.serverUser) else {
                throw ClusterError(
                    "running as root, and there is no \(PostgresCluster.serverUser) user to run the server")
            }
            for path in [root, socketDirectory] {
                guard chown(path, pw.pointee.pw_uid, pw.pointee.pw_gid) == 0 else {
                    throw ClusterError("chown \(path): errno \(errno)")
                }
            }
        }
        try run(
            bin + "/initdb", "-D", dataDirectory, "-U", PostgresCluster.serverUser, "-E", "UTF8", "--locale=C",
            "--auth-local=trust", "--auth-host=reject", "--no-sync")
        // The password role must use its password; everyone else is trusted on the socket.
        let hba = dataDirectory + "/pg_hba.conf"
        guard let old = FileManager.default.contents(atPath: hba) else { throw ClusterError("cannot read \(hba)") }
        let line = "local all \(PostgresCluster.passwordRole) scram-sha-256\n"
        guard FileManager.default.createFile(atPath: hba, contents: Data(line.utf8) + old) else {
            throw ClusterError("cannot write \(hba)")
        }
        try startServer()
        let admin = try PostgresConnection(address("postgres"))
        try admin.execute("CREATE DATABASE notes")
        try admin.execute(
            "CREATE ROLE \(PostgresCluster.passwordRole) LOGIN PASSWORD '\(PostgresCluster.passwordOfRole)'")
        try PostgresEventLog(connecting: address()).initialize()
    }

    /// Starts the server (again, after ``stopServer()``), waiting until it accepts connections.
    ///
    /// Every commit reaches the operating system before it returns (`synchronous_commit` stays
    /// on), so stopping the server at once loses nothing committed; only the disk's flushes are
    /// skipped (`fsync=off`: a crash of the machine, not of the server, would lose data) unless
    /// the cluster is ``durable``.
    public func startServer() throws {
        let flushes = durable ? "" : "-c fsync=off -c full_page_writes=off"
        try run(
            bin + "/pg_ctl", "-D", dataDirectory, "-l", root + "/server.log", "-w", "-t", "60", "-s", "-o",
            "-k \(socketDirectory) -c listen_addresses='' -p \(PostgresCluster.port) \(flushes)", "start")
    }

    /// Stops the server at once (`pg_ctl stop -m immediate`: every session is cut, as by a crash;
    /// the next start recovers from the write-ahead log).
    public func stopServer() throws {
        try run(bin + "/pg_ctl", "-D", dataDirectory, "-m", "immediate", "-s", "-w", "stop")
    }

    /// Runs `sql` as the superuser in `database`.
    public func execute(_ sql: String, database: String = "notes") throws {
        try PostgresConnection(address(database)).execute(sql)
    }

    /// A new empty database, for a test that changes the schema.
    public func makeDatabase() throws -> String {
        let name = "t\(databases.withLock { n -> Int in n += 1; return n })"
        try PostgresConnection(address("postgres")).execute("CREATE DATABASE \(name)")
        return name
    }

    /// Stops the server (immediately: the data is thrown away) and removes the directory.
    public func stop() {
        if access(dataDirectory + "/postmaster.pid", F_OK) == 0 {
            try? run(bin + "/pg_ctl", "-D", dataDirectory, "-m", "immediate", "-s", "-w", "stop")
        }
        remove()
    }

    private func remove() { try? FileManager.default.removeItem(atPath: root) }

    /// Runs a PostgreSQL program as the server's user, its output to the cluster's setup log.
    private func run(_ arguments: String...) throws {
        do {
            try PostgresCluster.run(arguments, log: root + "/setup.log")
        } catch {
            let server = FileManager.default.contents(atPath: root + "/server.log").map {
                "\nserver log:\n" + String(decoding: $0, as: UTF8.self)
            }
            throw ClusterError("\(error)\(server ?? "")")
        }
    }

    /// Runs a PostgreSQL program as the server's user (through `runuser` when we are root), its
    /// output and errors appended to `log`; the log is in the error when the program fails.
    private static func run(_ arguments: [String], log: String) throws {
        // Through sh, so the program's warnings go to the log with its output, not to the test's,
        // and it runs from a directory the server's user may enter (ours may be private).
        let quiet = ["/bin/sh", "-c", "cd / && exec \"$0\" \"$@\" 2>&1"] + arguments
        let command = geteuid() == 0 ? ["runuser", "-u", PostgresCluster.serverUser, "--"] + quiet : quiet
        let fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        defer { if fd >= 0 { close(fd) } }
        let status: Int32
        do {
            status = try ChildProcess.run(command, standardOutput: fd >= 0 ? fd : nil)
        } catch {
            throw ClusterError("cannot start \(command[0]): errno \(error.code)")
        }
        guard status == 0 else {
            let output = FileManager.default.contents(atPath: log).map { String(decoding: $0, as: UTF8.self) }
            throw ClusterError("\(arguments[0]) exited with \(status)\n\(output ?? "")")
        }
    }

}

public struct ClusterError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
