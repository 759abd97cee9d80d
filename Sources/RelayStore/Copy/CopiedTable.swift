import PostgresNIO

/// One table as ``StoreCopy`` moves it: read from SQLite a page at a time in the order of an
/// integer key, written to PostgreSQL a page per statement (the page travels as one JSON array,
/// unpacked by `jsonb_to_recordset`).
///
/// Rows are copied column by column, not through the store's types: content a newer rhea-relay
/// wrote, or columns those types do not carry (an outbox entry's `sent_at`), go across as stored.
struct CopiedTable: Sendable {
    /// The table's name, the same in both schemas.
    let name: String
    /// The SQLite expression that orders the rows and pages through them: an integer unique per
    /// row (`rowid` where the table has no integer key of its own).
    let key: String
    let columns: [CopiedColumn]
    /// The PostgreSQL identity column that takes the copied values, whose sequence must then
    /// continue past them.
    let identity: String?

    /// Every table the stores keep, in the order they are copied.
    static let all: [CopiedTable] = [
        CopiedTable(
            name: "chains", key: "rowid",
            columns: [.text("team"), .text("name"), .text("source"), .text("creator"), .double("created_at"), .double("updated_at")],
            identity: nil),
        CopiedTable(
            name: "custom_commands", key: "rowid",
            columns: [.text("team"), .text("name"), .text("template"), .text("creator"), .double("created_at")],
            identity: nil),
        CopiedTable(
            name: "settings", key: "rowid",
            columns: [
                .text("scope_kind"), .text("team"), .text("subject"), .text("lang"), .text("tier"), .text("retention"), .text("voice"), .text("receipts"),
                .double("budget"),
            ],
            identity: nil),
        CopiedTable(
            name: "history", key: "id",
            columns: [
                .integer("id"), .text("team"), .text("user_id", sqlite: #""user""#), .text("channel"), .text("command"),
                .text("command_line"), .text("result_text"),
                // SQLite keeps a boolean as 0 or 1.
                CopiedColumn(name: "succeeded", sqlite: "succeeded", type: "integer", value: "r.succeeded <> 0"),
                .double("agreement"), .integer("models_answered"), .integer("models_asked"), .double("elapsed"), .double("created_at"),
                .text("verdict"), .text("score_meaning"), .integer("agreeing"), .text("failure"),
            ],
            identity: "id"),
        CopiedTable(
            name: "ledger", key: "id",
            columns: [
                .integer("id"), .text("team"), .text("user_id", sqlite: #""user""#), .text("channel"), .text("origin"), .text("claim"),
                .text("answer"), .text("verdict"), .double("score"), .text("score_meaning"), .integer("answered"), .integer("asked"),
                .text("judges"), .text("backend"), .text("prompts_version"), .double("created_at"), .text("mark_verdict"),
                .text("marked_by"), .double("marked_at"),
            ],
            identity: "id"),
        CopiedTable(
            name: "admin_grants", key: "rowid",
            columns: [.text("platform"), .text("team"), .text("user_id"), .text("user_name"), .text("granted_by"), .double("granted_at")],
            identity: nil),
        CopiedTable(
            name: "model_calls", key: "id",
            columns: [
                .integer("id"), .text("platform"), .text("team"), .text("user_id"), .text("command"), .text("run"), .text("model"),
                .integer("tokens_in"), .integer("tokens_out"),
                CopiedColumn(name: "estimated", sqlite: "estimated", type: "integer", value: "r.estimated <> 0"),
                .double("cost"), .integer("elapsed_ms"), .double("at"),
            ],
            identity: "id"),
        CopiedTable(name: "dedupe", key: "rowid", columns: [.text("key"), .double("expires_at")], identity: nil),
        // Leases are not copied: they belong to the process that took them, which is not one of
        // the replicas that will share the copy.
        CopiedTable(
            name: "outbox", key: "seq",
            columns: [
                .text("id"), .integer("seq"), .text("platform"), .text("conversation"), .text("address"), .text("content"),
                .text("replaces"), .text("state"), .integer("attempts"), .integer("parts_delivered"), .double("next_attempt_at"),
                .double("created_at"), .double("sent_at"), .text("platform_ref"), .text("last_error"),
            ],
            identity: "seq"),
        CopiedTable(
            name: "inbox", key: "id",
            columns: [
                .integer("id"), .text("team"), .text("platform"), .text("conversation"), .text("address"), .text("event"),
                .double("accepted_at"), .integer("turn"), .double("reserved"),
                CopiedColumn(name: "over_budget", sqlite: "over_budget", type: "integer", value: "r.over_budget <> 0"),
            ],
            identity: "id"),
    ]

    /// The names of every copied table, for statements about all of them.
    static var names: String { all.map(\.name).joined(separator: ", ") }

    /// A page of SQLite rows after a key (bind 1), at most a count of them (bind 2), each with
    /// its key as `copy_key` and its columns under their PostgreSQL names.
    var sqlitePage: String {
        let columns = columns.map { $0.sqlite == $0.name ? $0.name : "\($0.sqlite) AS \($0.name)" }.joined(separator: ", ")
        return "SELECT \(key) AS copy_key, \(columns) FROM \(name) WHERE \(key) > ? ORDER BY \(key) LIMIT ?"
    }

    /// The insert of a page given as a JSON array of rows keyed by column name.
    func postgresInsert(json: String) -> PostgresQuery {
        let names = columns.map(\.name).joined(separator: ", ")
        let values = columns.map(\.value).joined(separator: ", ")
        let record = columns.map { "\($0.name) \($0.type)" }.joined(separator: ", ")
        // OVERRIDING SYSTEM VALUE: identities are generated ALWAYS in the shared schema, and the
        // copy keeps the values SQLite gave (ids that replies and users already refer to).
        let overriding = identity == nil ? "" : "OVERRIDING SYSTEM VALUE"
        return """
            INSERT INTO \(unescaped: name) (\(unescaped: names)) \(unescaped: overriding)
            SELECT \(unescaped: values) FROM jsonb_to_recordset(\(json)::jsonb) AS r(\(unescaped: record))
            """
    }

    /// Moves the identity's sequence past `value` (and past where it already is), so the next
    /// row PostgreSQL numbers gets a larger id than every copied one.
    func continueIdentity(past value: Int64) -> PostgresQuery? {
        guard let identity else { return nil }
        return """
            SELECT setval(s.name::regclass, GREATEST(\(value), COALESCE(pg_sequence_last_value(s.name::regclass), 0)))
            FROM (SELECT pg_get_serial_sequence(\(name), \(identity)) AS name) AS s
            """
    }
}

/// A column of a ``CopiedTable``: its PostgreSQL name and type, the SQLite expression it is read
/// from, and the expression that turns the JSON value into the column's.
struct CopiedColumn: Sendable {
    let name: String
    let sqlite: String
    /// Its type in `jsonb_to_recordset`'s record.
    let type: String
    let value: String

    init(name: String, sqlite: String, type: String, value: String) {
        (self.name, self.sqlite, self.type, self.value) = (name, sqlite, type, value)
    }

    static func text(_ name: String, sqlite: String? = nil) -> CopiedColumn {
        CopiedColumn(name: name, sqlite: sqlite ?? name, type: "text", value: "r.\(name)")
    }

    static func integer(_ name: String) -> CopiedColumn {
        CopiedColumn(name: name, sqlite: name, type: "bigint", value: "r.\(name)")
    }

    static func double(_ name: String) -> CopiedColumn {
        CopiedColumn(name: name, sqlite: name, type: "double precision", value: "r.\(name)")
    }
}
