/// Functions of the shared schema: what must be one round trip yet takes several statements.
enum PostgresFunctions {
    /// A run's end (`InboxStore.finishRun`) in one call: its history row and fact-checks written,
    /// its replies enqueued, its inbox item removed.
    ///
    /// A reply whose conversation has nothing pending is leased to the caller as it is written
    /// (its id is returned): the caller delivers it at once. Runs finishing in one conversation on
    /// different replicas take turns on an advisory lock keyed by the conversation, and each
    /// statement of a function reads what committed before it: so only one of them finds the
    /// conversation idle, and its replies still go out one at a time, in order.
    ///
    /// An item that is gone, or that another replica holds now, is not this run's to finish (its
    /// lease lapsed and the run was taken over): `RR001` with the item's id as its message, and
    /// nothing is written. An outbox id already taken raises `RR002` with the id as its message.
    /// A null item writes a record or entries on their own.
    static let finishRun = finishRunFunction(create: "CREATE FUNCTION", history: historyColumnsOfVersion1)

    /// Version 7: the history row keeps a consensus's verdict, score meaning and agreeing count.
    static let finishRunWithScores = finishRunFunction(create: "CREATE OR REPLACE FUNCTION", history: historyColumnsOfVersion7)

    /// Version 11: the history row keeps why a run failed.
    static let finishRunWithFailures = finishRunFunction(create: "CREATE OR REPLACE FUNCTION", history: historyColumnsOfVersion11)

    /// The run's end with its model calls: the calls inserted, then the rest as before, in the
    /// caller's one statement (a fenced-off run raises there and writes none of it).
    static let finishRunWithUsage = """
        CREATE OR REPLACE FUNCTION relay_finish_run(
            p_item bigint, p_owner text, p_history jsonb, p_ledger jsonb, p_replies jsonb, p_lease_until double precision,
            p_usage jsonb
        ) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
        BEGIN
            INSERT INTO model_calls (platform, team, user_id, command, run, model, tokens_in, tokens_out, estimated, cost,
                elapsed_ms, at)
            SELECT u.platform, u.team, u.user_id, u.command, u.run, u.model, u.tokens_in, u.tokens_out, u.estimated, u.cost,
                u.elapsed_ms, u.at
            FROM jsonb_to_recordset(COALESCE(p_usage, '[]'::jsonb)) AS u(platform text, team text, user_id text, command text,
                run text, model text, tokens_in bigint, tokens_out bigint, estimated boolean, cost double precision,
                elapsed_ms bigint, at double precision);
            RETURN QUERY SELECT relay_finish_run(p_item, p_owner, p_history, p_ledger, p_replies, p_lease_until);
        END
        $fn$
        """

    /// Admission with a look at the team's budget (`BudgetHold`): under a lock on the team's
    /// budget, so replicas admitting for one team at once take turns, the month's spend and
    /// what the team's items hold are summed, and the item is inserted holding `p_reserve`, or
    /// marked over budget and holding nothing. The lock is the transaction's: the insert that
    /// follows is seen by the next one to take it. Nil when the dedupe key was claimed already.
    static let admitWithinBudget = admitWithinBudget(
        create: "CREATE OR REPLACE FUNCTION",
        spent: """
            SELECT coalesce(sum(c.cost), 0) INTO spent FROM model_calls c
                    WHERE c.platform = p_platform AND c.team = p_budget_team AND c.at >= p_from AND c.at < p_to;
            """)

    /// Schema version 12: the month's spend from the days' totals (`relay_spent`).
    static let admitWithinBudgetByDays = admitWithinBudget(
        create: "CREATE OR REPLACE FUNCTION", spent: "spent := relay_spent(p_platform, p_budget_team, p_from, p_to);")

    /// What a team's model calls in `p_from..<p_to` cost: the days wholly inside from their
    /// totals (a month is a few dozen rows however busy the team), the part-days at either end
    /// call by call.
    static let spentInMonth = """
        CREATE FUNCTION relay_spent(p_platform text, p_team text, p_from double precision, p_to double precision)
        RETURNS double precision LANGUAGE plpgsql STABLE AS $fn$
        DECLARE
            first_day bigint := ceil(p_from / 86400);
            end_day bigint := floor(p_to / 86400);
        BEGIN
            IF first_day >= end_day THEN
                RETURN (SELECT coalesce(sum(c.cost), 0) FROM model_calls c
                    WHERE c.platform = p_platform AND c.team = p_team AND c.at >= p_from AND c.at < p_to);
            END IF;
            RETURN (SELECT coalesce(sum(d.cost), 0) FROM model_call_days d
                    WHERE d.platform = p_platform AND d.team = p_team AND d.day >= first_day AND d.day < end_day)
                + (SELECT coalesce(sum(c.cost), 0) FROM model_calls c
                    WHERE c.platform = p_platform AND c.team = p_team AND c.at >= p_from AND c.at < first_day * 86400.0)
                + (SELECT coalesce(sum(c.cost), 0) FROM model_calls c
                    WHERE c.platform = p_platform AND c.team = p_team AND c.at >= end_day * 86400.0 AND c.at < p_to);
        END
        $fn$
        """

    /// A statement's history rows added to (`+`) or taken from (`-`) their days' totals, in key
    /// order, on the backend's own shard (which a removal may take below 0: readers sum the
    /// shards). After a removal, the rows of the days it touched that are left at 0 go; an
    /// insert, on every run's end, looks at nothing more.
    static func runDaysChange(name: String, table: String, sign: String) -> String {
        let cleanUp =
            sign == "-"
            ? """
                DELETE FROM run_days d USING (SELECT DISTINCT r.team, floor(r.created_at / 86400)::bigint AS day FROM \(table) r) AS t
                    WHERE d.team = t.team AND d.day = t.day AND d.runs = 0;
            """ : ""
        return """
            CREATE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $fn$
            BEGIN
                INSERT INTO run_days AS d (team, day, command, succeeded, failure, shard, runs)
                SELECT r.team, floor(r.created_at / 86400)::bigint, r.command, r.succeeded, coalesce(r.failure, ''), (pg_backend_pid() % 8)::smallint,
                    \(sign)count(*)
                FROM \(table) r GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
                ON CONFLICT (team, day, command, succeeded, failure, shard) DO UPDATE SET runs = d.runs + excluded.runs;
            \(cleanUp)
                RETURN NULL;
            END
            $fn$
            """
    }

    /// A statement's model calls added to their days' totals, in key order, on the backend's shard.
    static let modelCallDaysInsert = """
        CREATE FUNCTION relay_model_call_days_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
            INSERT INTO model_call_days AS d (platform, team, day, model, shard, calls, cost, unpriced, estimated)
            SELECT a.platform, a.team, floor(a.at / 86400)::bigint, a.model, (pg_backend_pid() % 8)::smallint, count(*), coalesce(sum(a.cost), 0),
                count(*) FILTER (WHERE a.cost IS NULL), count(*) FILTER (WHERE a.estimated)
            FROM added a GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
            ON CONFLICT (platform, team, day, model, shard) DO UPDATE
                SET calls = d.calls + excluded.calls, cost = d.cost + excluded.cost, unpriced = d.unpriced + excluded.unpriced,
                    estimated = d.estimated + excluded.estimated;
            RETURN NULL;
        END
        $fn$
        """

    private static func admitWithinBudget(create: String, spent: String) -> String {
        """
        \(create) relay_admit_within_budget(
            p_expires_at double precision, p_dedupe_key text, p_now double precision, p_team text, p_platform text,
            p_conversation text, p_address text, p_event text, p_lease_until double precision, p_owner text,
            p_budget_team text, p_default_limit double precision, p_reserve double precision, p_from double precision, p_to double precision
        ) RETURNS TABLE (admitted_id bigint, admitted_over boolean, admitted_hold double precision) LANGUAGE plpgsql AS $fn$
        DECLARE
            spent double precision;
            held double precision;
            budget_limit double precision;
            over boolean := false;
            hold double precision := 0;
            new_id bigint;
        BEGIN
            IF p_dedupe_key IS NOT NULL THEN
                INSERT INTO dedupe (key, expires_at) VALUES (p_dedupe_key, p_expires_at)
                    ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE dedupe.expires_at <= p_now;
                IF NOT FOUND THEN
                    RETURN;
                END IF;
            END IF;
            PERFORM pg_advisory_xact_lock(hashtextextended('budget:' || p_platform || ':' || p_budget_team, 0));
            \(spent)
            SELECT coalesce(sum(i.reserved), 0) INTO held FROM inbox i WHERE i.platform = p_platform AND i.team = p_budget_team;
            SELECT s.budget INTO budget_limit FROM settings s WHERE s.scope_kind = 'team' AND s.team = p_budget_team AND s.subject = p_platform;
            budget_limit := coalesce(budget_limit, p_default_limit);
            IF budget_limit IS NOT NULL THEN
                over := NOT (spent < budget_limit AND spent + held + p_reserve <= budget_limit);
                hold := CASE WHEN over THEN 0 ELSE p_reserve END;
            END IF;
            INSERT INTO inbox AS i (team, platform, conversation, address, event, accepted_at, leased_until, owner, turn, reserved, over_budget)
                SELECT p_team, p_platform, p_conversation, p_address, p_event, p_now, p_lease_until,
                    CASE WHEN p_lease_until IS NULL THEN NULL ELSE p_owner END,
                    GREATEST(COALESCE((SELECT max(x.turn) FROM inbox x WHERE x.team = p_team), 0) + 1, COALESCE((SELECT min(y.turn) FROM inbox y), 0)),
                    hold, over
                RETURNING i.id INTO new_id;
            RETURN QUERY SELECT new_id, over, hold;
        END
        $fn$
        """
    }

    /// `relay_finish_run`'s history insert, for the columns of each version.
    private static let historyColumnsOfVersion1 = """
                INSERT INTO history (team, user_id, channel, command, command_line, result_text, succeeded, agreement,
                    models_answered, models_asked, elapsed, created_at)
                SELECT h.team, h.user_id, h.channel, h.command, h.command_line, h.result_text, h.succeeded, h.agreement,
                    h.models_answered, h.models_asked, h.elapsed, h.created_at
                FROM jsonb_to_record(p_history) AS h(team text, user_id text, channel text, command text, command_line text,
                    result_text text, succeeded boolean, agreement double precision, models_answered integer,
                    models_asked integer, elapsed double precision, created_at double precision);
        """

    private static let historyColumnsOfVersion7 = """
                INSERT INTO history (team, user_id, channel, command, command_line, result_text, succeeded, agreement,
                    models_answered, models_asked, elapsed, created_at, verdict, score_meaning, agreeing)
                SELECT h.team, h.user_id, h.channel, h.command, h.command_line, h.result_text, h.succeeded, h.agreement,
                    h.models_answered, h.models_asked, h.elapsed, h.created_at, h.verdict, h.score_meaning, h.agreeing
                FROM jsonb_to_record(p_history) AS h(team text, user_id text, channel text, command text, command_line text,
                    result_text text, succeeded boolean, agreement double precision, models_answered integer,
                    models_asked integer, elapsed double precision, created_at double precision, verdict text,
                    score_meaning text, agreeing integer);
        """

    private static let historyColumnsOfVersion11 = """
                INSERT INTO history (team, user_id, channel, command, command_line, result_text, succeeded, agreement,
                    models_answered, models_asked, elapsed, created_at, verdict, score_meaning, agreeing, failure)
                SELECT h.team, h.user_id, h.channel, h.command, h.command_line, h.result_text, h.succeeded, h.agreement,
                    h.models_answered, h.models_asked, h.elapsed, h.created_at, h.verdict, h.score_meaning, h.agreeing, h.failure
                FROM jsonb_to_record(p_history) AS h(team text, user_id text, channel text, command text, command_line text,
                    result_text text, succeeded boolean, agreement double precision, models_answered integer,
                    models_asked integer, elapsed double precision, created_at double precision, verdict text,
                    score_meaning text, agreeing integer, failure text);
        """

    /// Version 13: each fact-check's claim words (``PostgresLedgerWords``) written with it.
    static let finishRunWithClaimWords = finishRunFunction(create: "CREATE OR REPLACE FUNCTION", history: historyColumnsOfVersion11, claimWords: true)

    private static func finishRunFunction(create: String, history: String, claimWords: Bool = false) -> String {
        """
        \(create) relay_finish_run(
            p_item bigint, p_owner text, p_history jsonb, p_ledger jsonb, p_replies jsonb, p_lease_until double precision
        ) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
        DECLARE
            reply record;
            idle boolean;
        BEGIN
            IF p_item IS NOT NULL THEN
                DELETE FROM inbox WHERE id = p_item AND (owner IS NULL OR owner = p_owner);
                IF NOT FOUND THEN
                    RAISE EXCEPTION USING ERRCODE = 'RR001', MESSAGE = p_item::text;
                END IF;
            END IF;
            IF p_history IS NOT NULL THEN
        \(history)
            END IF;
            INSERT INTO ledger (id, team, user_id, channel, origin, claim, answer, verdict, score, score_meaning, answered,
                asked, judges, backend, prompts_version, created_at, mark_verdict, marked_by, marked_at\(claimWords ? ", claim_words" : ""))
            SELECT l.id, l.team, l.user_id, l.channel, l.origin, l.claim, l.answer, l.verdict, l.score, l.score_meaning,
                l.answered, l.asked, l.judges, l.backend, l.prompts_version, l.created_at, l.mark_verdict, l.marked_by,
                l.marked_at\(claimWords ? ", array_to_tsvector(l.claim_words)" : "")
            FROM jsonb_array_elements(p_ledger) WITH ORDINALITY AS e(item, n),
                jsonb_to_record(e.item) AS l(id bigint, team text, user_id text, channel text,
                origin text, claim text, answer text, verdict text, score double precision, score_meaning text,
                answered integer, asked integer, judges text, backend text, prompts_version text,
                created_at double precision, mark_verdict text, marked_by text, marked_at double precision\(claimWords ? ", claim_words text[]" : ""))
            ORDER BY e.n;
            FOR reply IN
                SELECT r.* FROM jsonb_array_elements(p_replies) WITH ORDINALITY AS e(item, n),
                    jsonb_to_record(e.item) AS r(id text, platform text,
                    conversation text, address text, content text, replaces text, state text, attempts integer,
                    parts_delivered integer, next_attempt_at double precision, created_at double precision,
                    platform_ref text, last_error text)
                ORDER BY e.n
            LOOP
                idle := false;
                IF p_lease_until IS NOT NULL THEN
                    PERFORM pg_advisory_xact_lock(hashtextextended('outbox:' || reply.conversation, 0));
                    idle := NOT EXISTS (SELECT 1 FROM outbox WHERE state = 'pending' AND conversation = reply.conversation);
                END IF;
                INSERT INTO outbox (id, platform, conversation, address, content, replaces, state, attempts,
                    parts_delivered, next_attempt_at, created_at, platform_ref, last_error, leased_until, owner)
                VALUES (reply.id, reply.platform, reply.conversation, reply.address, reply.content, reply.replaces,
                    reply.state, reply.attempts, reply.parts_delivered, reply.next_attempt_at, reply.created_at,
                    reply.platform_ref, reply.last_error, CASE WHEN idle THEN p_lease_until END,
                    CASE WHEN idle THEN p_owner END)
                ON CONFLICT (id) DO NOTHING;
                IF NOT FOUND THEN
                    RAISE EXCEPTION USING ERRCODE = 'RR002', MESSAGE = reply.id;
                END IF;
                IF idle THEN
                    RETURN NEXT reply.id;
                END IF;
            END LOOP;
            RETURN;
        END
        $fn$
        """
    }

    /// One call of the served API counted for its caller (`CallCountStore.admitCall`), or refused
    /// with the seconds until one would be allowed. Replicas counting one caller take turns on an
    /// advisory lock keyed by it, so two cannot both take the last call of a minute. A call
    /// leaves the minute when its second is 60 seconds past, the day when its minute has ended a
    /// day ago — when the refusal's `retry_after` says. (Schema version 3 let a minute go when it
    /// had begun a day ago, up to 60 s before that: `admitCallDayEndsWithItsMinute` replaces it.)
    static let admitCall = admitCall(create: "CREATE FUNCTION", dayDrop: "<=")

    /// Schema version 5: the day keeps a minute's calls until the minute has ended a day ago.
    static let admitCallDayEndsWithItsMinute = admitCall(create: "CREATE OR REPLACE FUNCTION", dayDrop: "<")

    private static func admitCall(create: String, dayDrop: String) -> String {
        """
        \(create) relay_admit_call(
            p_caller text, p_now double precision, p_per_minute bigint, p_per_day bigint
        ) RETURNS TABLE (refused text, retry_after integer) LANGUAGE plpgsql AS $fn$
        DECLARE
            this_second bigint := floor(p_now);
            this_minute bigint := floor(p_now / 60);
            in_minute bigint;
            oldest_second bigint;
            in_day bigint;
            oldest_minute bigint;
        BEGIN
            PERFORM pg_advisory_xact_lock(hashtextextended('api:' || p_caller, 0));
            DELETE FROM api_calls_by_second WHERE caller = p_caller AND at_second <= this_second - 60;
            DELETE FROM api_calls_by_minute WHERE caller = p_caller AND at_minute \(dayDrop) floor((p_now - 86400) / 60);
            SELECT coalesce(sum(calls), 0), min(at_second) INTO in_minute, oldest_second
                FROM api_calls_by_second WHERE caller = p_caller;
            IF in_minute >= p_per_minute THEN
                RETURN QUERY SELECT 'minute'::text, greatest(1, ceil(oldest_second + 60 - p_now))::integer;
                RETURN;
            END IF;
            SELECT coalesce(sum(calls), 0), min(at_minute) INTO in_day, oldest_minute
                FROM api_calls_by_minute WHERE caller = p_caller;
            IF in_day >= p_per_day THEN
                RETURN QUERY SELECT 'day'::text, greatest(1, ceil((oldest_minute + 1) * 60 + 86400 - p_now))::integer;
                RETURN;
            END IF;
            INSERT INTO api_calls_by_second AS c VALUES (p_caller, this_second, 1)
                ON CONFLICT (caller, at_second) DO UPDATE SET calls = c.calls + 1;
            INSERT INTO api_calls_by_minute AS c VALUES (p_caller, this_minute, 1)
                ON CONFLICT (caller, at_minute) DO UPDATE SET calls = c.calls + 1;
            RETURN QUERY SELECT NULL::text, 0;
        END
        $fn$
        """
    }
}
