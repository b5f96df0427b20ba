public import Basics
public import EventStore

/// Named notebooks and their members (schema version 2): each a call of a server function that
/// checks the session's role itself (see ``Schema/version2``).
extension PostgresEventLog {
    public func notebook(named name: String, create: Bool) throws(RemoteLogError) -> Identifier {
        try checkSchema()
        // A notebook the role may read is found by a plain query (row-level security shows a role
        // its own notebooks only). Anything else (no such name, another role's notebook, one to
        // create, a name the server refuses) goes through notebook_id, which creates or words
        // the refusal; its first call in a new session took 2.2-6.3 ms of the server's time
        // (the function compiled), the query 0.7 ms.
        if !create {
            let found = try connection.query(
                "SELECT notebook FROM notes_log.notebooks WHERE name = $1", [.text(name)])
            if found.rowCount == 1 { return try FieldReader(result: found, row: 0).uuid(0, "notebook") }
        }
        let result = try connection.query("SELECT notes_log.notebook_id($1, $2)", [.text(name), .bool(create)])
        guard result.rowCount == 1 else { throw .malformedReply("notebook_id answered \(result.rowCount) rows") }
        return try FieldReader(result: result, row: 0).uuid(0, "notebook_id")
    }

    public func share(notebook name: String, role: String, canWrite: Bool) throws(RemoteLogError) {
        try checkSchema()
        _ = try connection.query("SELECT notes_log.share($1, $2, $3)", [.text(name), .text(role), .bool(canWrite)])
    }

    @discardableResult
    public func unshare(notebook name: String, role: String) throws(RemoteLogError) -> Bool {
        try checkSchema()
        let result = try connection.query("SELECT notes_log.unshare($1, $2)", [.text(name), .text(role)])
        guard result.rowCount == 1 else { throw .malformedReply("unshare answered \(result.rowCount) rows") }
        return try FieldReader(result: result, row: 0).bool(0, "unshare")
    }

    public func members(notebook name: String) throws(RemoteLogError) -> [RemoteMember] {
        try checkSchema()
        let result = try connection.query(
            "SELECT role::text, can_write, added_by::text FROM notes_log.members_of($1)", [.text(name)])
        var members: [RemoteMember] = []
        for row in 0..<result.rowCount {
            let f = FieldReader(result: result, row: row)
            members.append(
                RemoteMember(
                    role: try f.text(0, "role"), canWrite: try f.bool(1, "can_write"),
                    addedBy: try f.text(2, "added_by")))
        }
        return members
    }
}
