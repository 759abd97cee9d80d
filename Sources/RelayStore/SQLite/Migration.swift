import Logging
import PostgresNIO

/// One step of the schema: a version number and the statements that bring the previous version to it.
///
/// Statements run one by one (SQLite prepares one statement at a time) inside a single transaction,
/// together with the row recording the version, so a migration is applied completely or not at all.
struct Migration: Sendable {
    let version: Int
    let statements: [String]
    /// PostgreSQL's only: a step in Swift after the statements, in their transaction, for what
    /// SQL cannot compute there (the ledger's words, split by the relay's own tokenizer).
    var fill: (@Sendable (PostgresConnection, Logger) async throws -> Void)? = nil
}

extension Migration {
    /// Every migration, in ascending version order. Append new versions at the end; never edit or
    /// renumber one that has shipped, since files in the field already recorded it as applied.
    static let all: [Migration] = [
        Migration(
            version: 1,
            statements: [
                """
                CREATE TABLE chains (
                    team TEXT NOT NULL,
                    name TEXT NOT NULL,
                    source TEXT NOT NULL,
                    creator TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    PRIMARY KEY (team, name)
                ) STRICT
                """,
                """
                CREATE TABLE custom_commands (
                    team TEXT NOT NULL,
                    name TEXT NOT NULL,
                    template TEXT NOT NULL,
                    creator TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    PRIMARY KEY (team, name)
                ) STRICT
                """,
                """
                CREATE TABLE settings (
                    scope_kind TEXT NOT NULL CHECK (scope_kind IN ('user', 'channel')),
                    team TEXT NOT NULL,
                    subject TEXT NOT NULL,
                    lang TEXT,
                    tier TEXT,
                    retention TEXT,
                    PRIMARY KEY (scope_kind, team, subject)
                ) STRICT
                """,
                """
                CREATE TABLE history (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    team TEXT NOT NULL,
                    user TEXT NOT NULL,
                    channel TEXT NOT NULL,
                    command TEXT NOT NULL,
                    command_line TEXT,
                    result_text TEXT,
                    succeeded INTEGER NOT NULL CHECK (succeeded IN (0, 1)),
                    agreement REAL,
                    models_answered INTEGER,
                    models_asked INTEGER,
                    elapsed REAL NOT NULL,
                    created_at REAL NOT NULL
                ) STRICT
                """,
                "CREATE INDEX history_by_user ON history (team, user, created_at DESC)",
                """
                CREATE TABLE dedupe (
                    key TEXT PRIMARY KEY NOT NULL,
                    expires_at REAL NOT NULL
                ) STRICT
                """,
                // Purging expired keys scans by expiry.
                "CREATE INDEX dedupe_by_expiry ON dedupe (expires_at)",
            ]
        ),
        Migration(
            version: 2,
            statements: [
                // `seq` records enqueue order: two entries of one conversation created in the same
                // instant must still go out in the order they were enqueued. It is a column of its own,
                // not the implicit rowid, because VACUUM may renumber the rowids of a table whose
                // primary key is not an INTEGER one.
                """
                CREATE TABLE outbox (
                    id TEXT PRIMARY KEY NOT NULL,
                    seq INTEGER NOT NULL UNIQUE,
                    platform TEXT NOT NULL,
                    conversation TEXT NOT NULL,
                    address TEXT NOT NULL,
                    content TEXT NOT NULL,
                    replaces TEXT,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
                    attempts INTEGER NOT NULL CHECK (attempts >= 0),
                    next_attempt_at REAL NOT NULL,
                    created_at REAL NOT NULL,
                    sent_at REAL,
                    leased_until REAL,
                    platform_ref TEXT,
                    last_error TEXT
                ) STRICT
                """,
                // Claiming walks the pending entries conversation by conversation, oldest first, to
                // find each conversation's head without sorting.
                "CREATE INDEX outbox_pending_by_conversation ON outbox (state, conversation, created_at, seq)",
                // Purging deletes finished entries by age; counting the pending ones reads it too.
                "CREATE INDEX outbox_by_state_and_creation ON outbox (state, created_at)",
            ]
        ),
        Migration(
            version: 3,
            statements: [
                // A reply in several messages is delivered part by part; the count of accepted parts
                // is where a retry (or the next process) resumes, so no part is ever sent twice.
                "ALTER TABLE outbox ADD COLUMN parts_delivered INTEGER NOT NULL DEFAULT 0 CHECK (parts_delivered >= 0)",
                // History is aged out by creation time while the relay runs.
                "CREATE INDEX history_by_creation ON history (created_at)",
            ]
        ),
        Migration(
            version: 4,
            statements: [
                // The durable inbox: an accepted event, committed before the platform is acknowledged
                // and deleted in the transaction that puts its reply in the outbox. AUTOINCREMENT: an
                // id is never reused, since a run's progress message is keyed by it.
                """
                CREATE TABLE inbox (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    team TEXT NOT NULL,
                    platform TEXT NOT NULL,
                    conversation TEXT NOT NULL,
                    address TEXT NOT NULL,
                    event TEXT NOT NULL,
                    accepted_at REAL NOT NULL
                ) STRICT
                """
            ]
        ),
        Migration(
            version: 5,
            statements: [
                // The fact-check ledger (issue 14): every consensus, per team. The judges' part is
                // one JSON array: it is read whole, never queried by field.
                """
                CREATE TABLE ledger (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    team TEXT NOT NULL,
                    user TEXT NOT NULL,
                    channel TEXT NOT NULL,
                    origin TEXT NOT NULL,
                    claim TEXT,
                    answer TEXT,
                    verdict TEXT,
                    score REAL NOT NULL,
                    score_meaning TEXT NOT NULL,
                    answered INTEGER NOT NULL,
                    asked INTEGER NOT NULL,
                    judges TEXT NOT NULL,
                    backend TEXT NOT NULL,
                    prompts_version TEXT,
                    created_at REAL NOT NULL,
                    mark_verdict TEXT,
                    marked_by TEXT,
                    marked_at REAL
                ) STRICT
                """,
                "CREATE INDEX ledger_by_team ON ledger (team, created_at DESC)",
                "CREATE INDEX ledger_by_creation ON ledger (created_at)",
                // Full-text search over claims, kept in step with the table by triggers (an
                // external-content FTS5 table stores only its index, not a second copy of the text).
                "CREATE VIRTUAL TABLE ledger_search USING fts5 (claim, content = 'ledger', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2')",
                """
                CREATE TRIGGER ledger_search_insert AFTER INSERT ON ledger BEGIN
                    INSERT INTO ledger_search (rowid, claim) VALUES (new.id, new.claim);
                END
                """,
                """
                CREATE TRIGGER ledger_search_delete AFTER DELETE ON ledger BEGIN
                    INSERT INTO ledger_search (ledger_search, rowid, claim) VALUES ('delete', old.id, old.claim);
                END
                """,
                """
                CREATE TRIGGER ledger_search_update AFTER UPDATE OF claim ON ledger BEGIN
                    INSERT INTO ledger_search (ledger_search, rowid, claim) VALUES ('delete', old.id, old.claim);
                    INSERT INTO ledger_search (rowid, claim) VALUES (new.id, new.claim);
                END
                """,
            ]
        ),
        Migration(
            version: 6,
            statements: [
                // Inbox items are claimed under leases (a run in flight holds its item's lease),
                // and in turns: an item's turn is one past its team's last, never before the
                // oldest item's, so teams take turns however many items one of them sends.
                "ALTER TABLE inbox ADD COLUMN leased_until REAL",
                "ALTER TABLE inbox ADD COLUMN turn INTEGER NOT NULL DEFAULT 0",
                "CREATE INDEX inbox_by_team_and_turn ON inbox (team, turn)",
                "CREATE INDEX inbox_by_turn ON inbox (turn, id)",
                // Connection leases (docs/replicas.md): who holds each connection a platform allows once,
                // until when, and the fencing token that grows each time it changes hands. A
                // released lease keeps its row: the token must keep growing, and `state` is what
                // the next holder starts from (Telegram's offset, the gateway's session).
                """
                CREATE TABLE leases (
                    name TEXT PRIMARY KEY NOT NULL,
                    holder TEXT,
                    token INTEGER NOT NULL,
                    expires_at REAL,
                    state TEXT
                ) STRICT
                """,
            ]
        ),
        Migration(
            version: 7,
            statements: [
                // `/settings voice` (issue 26): what a voice note sent without a command gets.
                "ALTER TABLE settings ADD COLUMN voice TEXT"
            ]
        ),
        Migration(
            version: 8,
            statements: [
                // A Matrix message's reference was `<room> <event>`, one string with a separator;
                // it is JSON now (`MatrixMessageRef`). Neither id holds a space.
                """
                UPDATE outbox SET platform_ref = json_object(
                    'event', substr(platform_ref, instr(platform_ref, ' ') + 1),
                    'room', substr(platform_ref, 1, instr(platform_ref, ' ') - 1))
                WHERE platform = 'matrix' AND instr(platform_ref, ' ') > 0
                """
            ]
        ),
        Migration(
            version: 9,
            statements: [
                // A consensus's verdict, what its score means and how many agreed (issue 46): so
                // `/history` words a score as the reply did.
                "ALTER TABLE history ADD COLUMN verdict TEXT",
                "ALTER TABLE history ADD COLUMN score_meaning TEXT",
                "ALTER TABLE history ADD COLUMN agreeing INTEGER",
            ]
        ),
        Migration(
            version: 10,
            statements: [
                // The team's admin role granted here (`/admin grant`, docs/admin.md), per platform
                // and team: a team's id means something only on its platform.
                """
                CREATE TABLE admin_grants (
                    platform TEXT NOT NULL,
                    team TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    user_name TEXT NOT NULL,
                    granted_by TEXT NOT NULL,
                    granted_at REAL NOT NULL,
                    PRIMARY KEY (platform, team, user_id)
                ) STRICT
                """
            ]
        ),
        Migration(
            version: 11,
            statements: [
                // Each model call a run made (docs/admin.md, "Usage"), written with the run's end:
                // no text, kept whatever the retention. `/usage` and the export read a team's month.
                """
                CREATE TABLE model_calls (
                    id INTEGER PRIMARY KEY,
                    platform TEXT NOT NULL,
                    team TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    command TEXT NOT NULL,
                    run TEXT NOT NULL,
                    model TEXT NOT NULL,
                    tokens_in INTEGER NOT NULL,
                    tokens_out INTEGER NOT NULL,
                    estimated INTEGER NOT NULL,
                    cost REAL,
                    elapsed_ms INTEGER NOT NULL,
                    at REAL NOT NULL
                ) STRICT
                """,
                "CREATE INDEX model_calls_by_team ON model_calls (team, at)",
                // `/settings receipts on|off`.
                "ALTER TABLE settings ADD COLUMN receipts TEXT",
            ]
        ),
        Migration(
            version: 12,
            statements: [
                // A team's monthly budget (`/admin budget`), in its `team` scope; and what each
                // inbox item holds of it until its run ends, or that it was over (docs/admin.md).
                "ALTER TABLE settings ADD COLUMN budget REAL",
                "ALTER TABLE inbox ADD COLUMN reserved REAL NOT NULL DEFAULT 0",
                "ALTER TABLE inbox ADD COLUMN over_budget INTEGER NOT NULL DEFAULT 0",
                "CREATE INDEX model_calls_by_platform_team ON model_calls (platform, team, at)",
            ]
        ),
        Migration(
            version: 13,
            statements: [
                // Why a run failed (the console's overview counts failures by it).
                "ALTER TABLE history ADD COLUMN failure TEXT"
            ]
        ),
        Migration(
            version: 14,
            statements: [
                // Each day's totals, kept by triggers as rows come and go, so that the console's
                // charts and the budget's month read a row per day instead of every run and call
                // (docs/console.md, "Speed"). A failure of none is kept as '' (a key may not be null).
                """
                CREATE TABLE run_days (
                    team TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    command TEXT NOT NULL,
                    succeeded INTEGER NOT NULL,
                    failure TEXT NOT NULL,
                    runs INTEGER NOT NULL,
                    PRIMARY KEY (team, day, command, succeeded, failure)
                ) STRICT, WITHOUT ROWID
                """,
                """
                CREATE TRIGGER run_days_insert AFTER INSERT ON history BEGIN
                    INSERT INTO run_days VALUES (new.team, CAST(new.created_at / 86400 AS INTEGER), new.command, new.succeeded, IFNULL(new.failure, ''), 1)
                    ON CONFLICT DO UPDATE SET runs = runs + 1;
                END
                """,
                """
                CREATE TRIGGER run_days_delete AFTER DELETE ON history BEGIN
                    UPDATE run_days SET runs = runs - 1
                    WHERE team = old.team AND day = CAST(old.created_at / 86400 AS INTEGER) AND command = old.command
                        AND succeeded = old.succeeded AND failure = IFNULL(old.failure, '');
                    DELETE FROM run_days
                    WHERE team = old.team AND day = CAST(old.created_at / 86400 AS INTEGER) AND command = old.command
                        AND succeeded = old.succeeded AND failure = IFNULL(old.failure, '') AND runs <= 0;
                END
                """,
                """
                INSERT INTO run_days
                SELECT team, CAST(created_at / 86400 AS INTEGER), command, succeeded, IFNULL(failure, ''), count(*) FROM history GROUP BY 1, 2, 3, 4, 5
                """,
                // Model calls are never deleted (docs/admin.md, "Usage"): an insert trigger is all.
                """
                CREATE TABLE model_call_days (
                    platform TEXT NOT NULL,
                    team TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    model TEXT NOT NULL,
                    calls INTEGER NOT NULL,
                    cost REAL NOT NULL,
                    unpriced INTEGER NOT NULL,
                    estimated INTEGER NOT NULL,
                    PRIMARY KEY (platform, team, day, model)
                ) STRICT, WITHOUT ROWID
                """,
                """
                CREATE TRIGGER model_call_days_insert AFTER INSERT ON model_calls BEGIN
                    INSERT INTO model_call_days
                    VALUES (new.platform, new.team, CAST(new.at / 86400 AS INTEGER), new.model, 1, IFNULL(new.cost, 0), new.cost IS NULL, new.estimated)
                    ON CONFLICT DO UPDATE SET calls = calls + 1, cost = cost + excluded.cost, unpriced = unpriced + excluded.unpriced,
                        estimated = estimated + excluded.estimated;
                END
                """,
                """
                INSERT INTO model_call_days
                SELECT platform, team, CAST(at / 86400 AS INTEGER), model, count(*), IFNULL(sum(cost), 0), sum(cost IS NULL), sum(estimated)
                FROM model_calls GROUP BY 1, 2, 3, 4
                """,
                // The council page's marked fact-checks, newest first, without reading the others.
                "CREATE INDEX ledger_marked ON ledger (team, created_at DESC, id DESC) WHERE mark_verdict IS NOT NULL",
            ]
        ),
        Migration(
            version: 15,
            statements: [
                // Each fact-check's votes as the council and the council page read them
                // (`LedgerJudgesCoding.votes`), made once as the entry is written instead of from
                // the judges' JSON at every read. Retention's rewrite of the judges only drops
                // their answers, which the votes do not hold.
                "ALTER TABLE ledger ADD COLUMN votes TEXT",
                "UPDATE ledger SET votes = \(LedgerJudgesCoding.votesSQLite(of: "ledger.judges"))",
                """
                CREATE TRIGGER ledger_votes AFTER INSERT ON ledger BEGIN
                    UPDATE ledger SET votes = \(LedgerJudgesCoding.votesSQLite(of: "new.judges")) WHERE id = new.id;
                END
                """,
            ]
        ),
    ]

    /// The newest version this code knows.
    static var latestVersion: Int { all.last?.version ?? 0 }
}
