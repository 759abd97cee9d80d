/// The shared store's schema, version by version (PostgreSQL's own numbering: its SQL is not
/// SQLite's, so the two lists move independently).
///
/// Text that is compared or sorted is `COLLATE "C"`: byte order, as SQLite compares, whatever
/// locale the database was created with — the same names sort the same in every store. Instants
/// are `double precision` seconds since 1970, as SQLite keeps them, so a date comes back to the
/// last bit. Each migration runs in one transaction under an advisory lock (``PostgresMigrator``).
enum PostgresSchema {
    /// Append new versions at the end; never edit one that has shipped.
    static let migrations: [Migration] = [
        Migration(
            version: 1,
            statements: [
                """
                CREATE TABLE chains (
                    team text COLLATE "C" NOT NULL,
                    name text COLLATE "C" NOT NULL,
                    source text NOT NULL,
                    creator text NOT NULL,
                    created_at double precision NOT NULL,
                    updated_at double precision NOT NULL,
                    PRIMARY KEY (team, name)
                )
                """,
                """
                CREATE TABLE custom_commands (
                    team text COLLATE "C" NOT NULL,
                    name text COLLATE "C" NOT NULL,
                    template text NOT NULL,
                    creator text NOT NULL,
                    created_at double precision NOT NULL,
                    PRIMARY KEY (team, name)
                )
                """,
                """
                CREATE TABLE settings (
                    scope_kind text NOT NULL CHECK (scope_kind IN ('user', 'channel')),
                    team text COLLATE "C" NOT NULL,
                    subject text COLLATE "C" NOT NULL,
                    lang text,
                    tier text,
                    retention text,
                    PRIMARY KEY (scope_kind, team, subject)
                )
                """,
                """
                CREATE TABLE history (
                    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    team text COLLATE "C" NOT NULL,
                    user_id text COLLATE "C" NOT NULL,
                    channel text COLLATE "C" NOT NULL,
                    command text NOT NULL,
                    command_line text,
                    result_text text,
                    succeeded boolean NOT NULL,
                    agreement double precision,
                    models_answered integer,
                    models_asked integer,
                    elapsed double precision NOT NULL,
                    created_at double precision NOT NULL
                )
                """,
                "CREATE INDEX history_by_user ON history (team, user_id, created_at DESC)",
                "CREATE INDEX history_by_creation ON history (created_at)",
                """
                CREATE TABLE dedupe (
                    key text COLLATE "C" PRIMARY KEY,
                    expires_at double precision NOT NULL
                )
                """,
                "CREATE INDEX dedupe_by_expiry ON dedupe (expires_at)",
                // `seq` is enqueue order from a sequence, so replicas never pick the same one.
                // `owner` is the replica whose lease `leased_until` is.
                """
                CREATE TABLE outbox (
                    id text COLLATE "C" PRIMARY KEY,
                    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
                    platform text NOT NULL,
                    conversation text COLLATE "C" NOT NULL,
                    address text NOT NULL,
                    content text NOT NULL,
                    replaces text,
                    state text NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
                    attempts integer NOT NULL CHECK (attempts >= 0),
                    parts_delivered integer NOT NULL DEFAULT 0 CHECK (parts_delivered >= 0),
                    next_attempt_at double precision NOT NULL,
                    created_at double precision NOT NULL,
                    sent_at double precision,
                    leased_until double precision,
                    owner text,
                    platform_ref text,
                    last_error text
                )
                """,
                // A claim reads each conversation's pending entries in delivery order; only
                // pending ones are in this index, so it stays the size of the backlog.
                "CREATE INDEX outbox_pending_by_conversation ON outbox (conversation, created_at, seq) WHERE state = 'pending'",
                "CREATE INDEX outbox_by_state_and_creation ON outbox (state, created_at)",
                """
                CREATE TABLE inbox (
                    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    team text COLLATE "C" NOT NULL,
                    platform text NOT NULL,
                    conversation text COLLATE "C" NOT NULL,
                    address text NOT NULL,
                    event text NOT NULL,
                    accepted_at double precision NOT NULL,
                    owner text,
                    leased_until double precision,
                    turn bigint NOT NULL DEFAULT 0
                )
                """,
                "CREATE INDEX inbox_by_team_and_turn ON inbox (team, turn)",
                "CREATE INDEX inbox_by_turn ON inbox (turn, id)",
                // Work written for a claim wakes every replica's claimer (delivered at commit;
                // polling stays the fallback). Leased rows are their writer's own: no wake.
                """
                CREATE FUNCTION relay_wake_claimers() RETURNS trigger LANGUAGE plpgsql AS $fn$
                BEGIN
                    -- Nested, not OR-ed: an inbox row has no state to read.
                    IF NEW.leased_until IS NULL THEN
                        IF TG_TABLE_NAME = 'inbox' THEN
                            PERFORM pg_notify('relay_inbox', '');
                        ELSIF NEW.state = 'pending' THEN
                            PERFORM pg_notify('relay_outbox', '');
                        END IF;
                    END IF;
                    RETURN NULL;
                END
                $fn$
                """,
                "CREATE TRIGGER inbox_wakes AFTER INSERT OR UPDATE OF leased_until ON inbox FOR EACH ROW EXECUTE FUNCTION relay_wake_claimers()",
                "CREATE TRIGGER outbox_wakes AFTER INSERT OR UPDATE OF leased_until ON outbox FOR EACH ROW EXECUTE FUNCTION relay_wake_claimers()",
                // Ids are handed out before the insert when a reply must name its fact-check
                // (`BY DEFAULT`, so the store may insert the id it took from the sequence).
                """
                CREATE TABLE ledger (
                    id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                    team text COLLATE "C" NOT NULL,
                    user_id text COLLATE "C" NOT NULL,
                    channel text COLLATE "C" NOT NULL,
                    origin text NOT NULL,
                    claim text,
                    answer text,
                    verdict text,
                    score double precision NOT NULL,
                    score_meaning text NOT NULL,
                    answered integer NOT NULL,
                    asked integer NOT NULL,
                    judges text NOT NULL,
                    backend text NOT NULL,
                    prompts_version text,
                    created_at double precision NOT NULL,
                    mark_verdict text,
                    marked_by text,
                    marked_at double precision
                )
                """,
                "CREATE INDEX ledger_by_team ON ledger (team, created_at DESC, id DESC)",
                "CREATE INDEX ledger_by_creation ON ledger (created_at)",
                PostgresFunctions.finishRun,
            ]
        ),
        Migration(
            version: 2,
            statements: [
                // Connection leases (docs/replicas.md), as SQLite keeps them: one row per connection a
                // platform allows once, taken over by one upsert whose WHERE decides who wins.
                """
                CREATE TABLE leases (
                    name text COLLATE "C" PRIMARY KEY,
                    holder text COLLATE "C",
                    token bigint NOT NULL,
                    expires_at double precision,
                    state text
                )
                """
            ]
        ),
        Migration(
            version: 3,
            statements: [
                // The served API's calls per caller, counted for every replica (docs/replicas.md): per
                // second for the sliding minute, per minute for the sliding day. Each caller
                // keeps at most 60 + 1 440 rows; `relay_admit_call` drops the older ones.
                """
                CREATE TABLE api_calls_by_second (
                    caller text COLLATE "C" NOT NULL,
                    at_second bigint NOT NULL,
                    calls integer NOT NULL,
                    PRIMARY KEY (caller, at_second)
                )
                """,
                """
                CREATE TABLE api_calls_by_minute (
                    caller text COLLATE "C" NOT NULL,
                    at_minute bigint NOT NULL,
                    calls integer NOT NULL,
                    PRIMARY KEY (caller, at_minute)
                )
                """,
                PostgresFunctions.admitCall,
            ]
        ),
        Migration(
            version: 4,
            statements: [
                // `/settings voice` (issue 26): what a voice note sent without a command gets.
                "ALTER TABLE settings ADD COLUMN voice text"
            ]
        ),
        Migration(
            version: 5,
            statements: [
                // The served API's day: a minute's calls count until the minute has ended a day
                // ago, as a refusal's Retry-After says (version 3 freed them up to 60 s sooner).
                PostgresFunctions.admitCallDayEndsWithItsMinute
            ]
        ),
        Migration(
            version: 6,
            statements: [
                // A Matrix message's reference was `<room> <event>`, one string with a separator;
                // it is JSON now (`MatrixMessageRef`). Neither id holds a space.
                """
                UPDATE outbox SET platform_ref = json_build_object(
                    'event', split_part(platform_ref, ' ', 2), 'room', split_part(platform_ref, ' ', 1))::text
                WHERE platform = 'matrix' AND position(' ' in platform_ref) > 0
                """
            ]
        ),
        Migration(
            version: 7,
            statements: [
                // A consensus's verdict, what its score means and how many agreed (issue 46): so
                // `/history` words a score as the reply did. A replica of the version before
                // sends no such keys, which the function reads as null.
                "ALTER TABLE history ADD COLUMN verdict text, ADD COLUMN score_meaning text, ADD COLUMN agreeing integer",
                PostgresFunctions.finishRunWithScores,
            ]
        ),
        Migration(
            version: 8,
            statements: [
                // The team's admin role granted here (`/admin grant`, docs/admin.md).
                """
                CREATE TABLE admin_grants (
                    platform text COLLATE "C" NOT NULL,
                    team text COLLATE "C" NOT NULL,
                    user_id text COLLATE "C" NOT NULL,
                    user_name text NOT NULL,
                    granted_by text NOT NULL,
                    granted_at double precision NOT NULL,
                    PRIMARY KEY (platform, team, user_id)
                )
                """
            ]
        ),
        Migration(
            version: 9,
            statements: [
                // Each model call a run made (docs/admin.md, "Usage"), written by the run's end:
                // `relay_finish_run` gains the calls as a seventh argument. The six-argument one
                // stays, for a replica of the version before during a rolling upgrade.
                """
                CREATE TABLE model_calls (
                    id bigserial PRIMARY KEY,
                    platform text COLLATE "C" NOT NULL,
                    team text COLLATE "C" NOT NULL,
                    user_id text COLLATE "C" NOT NULL,
                    command text NOT NULL,
                    run text NOT NULL,
                    model text NOT NULL,
                    tokens_in bigint NOT NULL,
                    tokens_out bigint NOT NULL,
                    estimated boolean NOT NULL,
                    cost double precision,
                    elapsed_ms bigint NOT NULL,
                    at double precision NOT NULL
                )
                """,
                "CREATE INDEX model_calls_by_team ON model_calls (team, at)",
                PostgresFunctions.finishRunWithUsage,
                // `/settings receipts on|off`.
                "ALTER TABLE settings ADD COLUMN receipts text",
            ]
        ),
        Migration(
            version: 10,
            statements: [
                // A team's monthly budget (`/admin budget`), in its `team` scope; what each inbox
                // item holds of it until its run ends, or that it was over (docs/admin.md).
                "ALTER TABLE settings ADD COLUMN budget double precision",
                "ALTER TABLE inbox ADD COLUMN reserved double precision NOT NULL DEFAULT 0, ADD COLUMN over_budget boolean NOT NULL DEFAULT false",
                "CREATE INDEX model_calls_by_platform_team ON model_calls (platform, team, at)",
                PostgresFunctions.admitWithinBudget,
            ]
        ),
        Migration(
            version: 11,
            statements: [
                // Why a run failed (the console's overview counts failures by it); the
                // six-argument `relay_finish_run`, which the seven-argument one calls, writes it.
                "ALTER TABLE history ADD COLUMN failure text",
                PostgresFunctions.finishRunWithFailures,
            ]
        ),
        Migration(
            version: 12,
            statements: [
                // Each day's totals, kept by triggers as rows come and go, so that the console's
                // charts and the budget's month read a row per day instead of every run and call
                // (docs/console.md, "Speed"). Runs finishing at once would queue on one team's row
                // of the day until each commits: a row per backend (`shard`, its pid mod 8) lets
                // them pass, and readers sum the shards. Each statement adds its rows in key order,
                // so two transactions never wait on each other's rows crosswise.
                """
                CREATE TABLE run_days (
                    team text NOT NULL,
                    day bigint NOT NULL,
                    command text NOT NULL,
                    succeeded boolean NOT NULL,
                    failure text NOT NULL,
                    shard smallint NOT NULL,
                    runs bigint NOT NULL,
                    PRIMARY KEY (team, day, command, succeeded, failure, shard)
                )
                """,
                PostgresFunctions.runDaysChange(name: "relay_run_days_insert", table: "added", sign: "+"),
                PostgresFunctions.runDaysChange(name: "relay_run_days_delete", table: "removed", sign: "-"),
                "CREATE TRIGGER run_days_insert AFTER INSERT ON history REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION relay_run_days_insert()",
                "CREATE TRIGGER run_days_delete AFTER DELETE ON history REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION relay_run_days_delete()",
                """
                INSERT INTO run_days
                SELECT team, floor(created_at / 86400)::bigint, command, succeeded, coalesce(failure, ''), 0, count(*) FROM history GROUP BY 1, 2, 3, 4, 5
                """,
                // Model calls are never deleted (docs/admin.md, "Usage"): an insert trigger is all.
                """
                CREATE TABLE model_call_days (
                    platform text NOT NULL,
                    team text NOT NULL,
                    day bigint NOT NULL,
                    model text NOT NULL,
                    shard smallint NOT NULL,
                    calls bigint NOT NULL,
                    cost double precision NOT NULL,
                    unpriced bigint NOT NULL,
                    estimated bigint NOT NULL,
                    PRIMARY KEY (platform, team, day, model, shard)
                )
                """,
                PostgresFunctions.modelCallDaysInsert,
                """
                CREATE TRIGGER model_call_days_insert AFTER INSERT ON model_calls REFERENCING NEW TABLE AS added
                FOR EACH STATEMENT EXECUTE FUNCTION relay_model_call_days_insert()
                """,
                """
                INSERT INTO model_call_days
                SELECT platform, team, floor(at / 86400)::bigint, model, 0, count(*), coalesce(sum(cost), 0), count(*) FILTER (WHERE cost IS NULL),
                    count(*) FILTER (WHERE estimated)
                FROM model_calls GROUP BY 1, 2, 3, 4
                """,
                PostgresFunctions.spentInMonth,
                PostgresFunctions.admitWithinBudgetByDays,
                // The council page's marked fact-checks, newest first, without reading the others.
                "CREATE INDEX ledger_marked ON ledger (team, created_at DESC, id DESC) WHERE mark_verdict IS NOT NULL",
            ]
        ),
        Migration(
            version: 13,
            statements: [
                // Each claim's words as the relay splits them, for the ledger's search: SQLite's
                // FTS5 index has them, and PostgreSQL's own text search splits and folds words
                // otherwise (``PostgresLedgerWords``). Filled for the entries already there, after
                // the statements.
                "ALTER TABLE ledger ADD COLUMN claim_words tsvector",
                "CREATE INDEX ledger_claim_words ON ledger USING gin (claim_words)",
                PostgresFunctions.finishRunWithClaimWords,
                // Each fact-check's votes as the council and the council page read them
                // (`LedgerJudgesCoding.votes`), made once as the entry is written instead of from
                // the judges' JSON at every read (16 ms of the council page's). Retention's
                // rewrite of the judges only drops their answers, which the votes do not hold.
                "ALTER TABLE ledger ADD COLUMN votes text",
                "UPDATE ledger SET votes = \(LedgerJudgesCoding.votesPostgres(of: "ledger.judges"))",
                """
                CREATE FUNCTION relay_ledger_votes() RETURNS trigger LANGUAGE plpgsql AS $fn$
                BEGIN
                    NEW.votes := \(LedgerJudgesCoding.votesPostgres(of: "NEW.judges"));
                    RETURN NEW;
                END
                $fn$
                """,
                "CREATE TRIGGER ledger_votes BEFORE INSERT ON ledger FOR EACH ROW EXECUTE FUNCTION relay_ledger_votes()",
            ],
            fill: PostgresLedgerWords.fill
        ),
    ]

    static var latestVersion: Int { migrations.last?.version ?? 0 }
}
