import PostgresNIO

/// The three statements every command costs (admission, a run's end, delivery marks), as
/// prepared statements: each connection parses and plans them once, where the server otherwise
/// spent as much on parsing and planning them as on running them. Types are named, so a NULL
/// bound the first time does not leave a parameter's type to guesswork.
enum PostgresHotStatements {
    /// `InboxStore.admit`: the dedupe key claimed (when given) and the item inserted, in one
    /// statement (see `PostgresStore.admit`).
    struct Admit: PostgresPreparedStatement {
        static let name = "relay_admit_v1"
        static let sql = """
            WITH claim AS (
                INSERT INTO dedupe (key, expires_at) SELECT k, $1 FROM (SELECT $2::text AS k) AS given
                WHERE k IS NOT NULL
                ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE dedupe.expires_at <= $3
                RETURNING key
            )
            INSERT INTO inbox (team, platform, conversation, address, event, accepted_at, leased_until, owner, turn)
            SELECT $4, $5, $6, $7, $8, $3, $9, CASE WHEN $9 IS NULL THEN NULL ELSE $10 END,
                GREATEST(COALESCE((SELECT max(turn) FROM inbox WHERE team = $4), 0) + 1, COALESCE((SELECT min(turn) FROM inbox), 0))
            WHERE $2::text IS NULL OR EXISTS (SELECT 1 FROM claim)
            RETURNING id
            """
        static let bindingDataTypes: [PostgresDataType] = [.float8, .text, .float8, .text, .text, .text, .text, .text, .float8, .text]

        let expiresAt: Double
        let dedupeKey: String?
        let acceptedAt: Double
        let team, platform, conversation, address, event: String
        let leaseUntil: Double?
        let owner: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 10)
            bindings.append(expiresAt)
            bindings.append(dedupeKey)
            bindings.append(acceptedAt)
            for text in [team, platform, conversation, address, event] { bindings.append(text) }
            bindings.append(leaseUntil)
            bindings.append(owner)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
    }

    /// A run's end through `relay_finish_run`: the ids of the replies leased to the caller.
    struct FinishRun: PostgresPreparedStatement {
        static let name = "relay_finish_run_v2"
        static let sql = "SELECT relay_finish_run($1, $2, $3::jsonb, $4::jsonb, $5::jsonb, $6, $7::jsonb) AS id"
        static let bindingDataTypes: [PostgresDataType] = [.int8, .text, .text, .text, .text, .float8, .text]

        let item: Int64?
        let owner: String
        let history: String?
        let ledger, replies: String
        let leaseUntil: Double?
        /// The run's model calls, a JSON array (empty: none).
        let usage: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 7)
            bindings.append(item)
            bindings.append(owner)
            bindings.append(history)
            bindings.append(ledger)
            bindings.append(replies)
            bindings.append(leaseUntil)
            bindings.append(usage)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> String? { try row.decode(String?.self) }
    }

    /// `OutboxStore.markSent` for several entries at once (`MarkSentBatcher`): the ids found.
    /// An empty reference stands for none (arrays here hold no NULLs; no platform's id is empty).
    struct MarkSent: PostgresPreparedStatement {
        static let name = "relay_mark_sent_v2"
        static let sql = """
            UPDATE outbox SET state = 'sent', sent_at = u.sent_at, platform_ref = COALESCE(NULLIF(u.ref, ''), outbox.platform_ref),
                leased_until = NULL, owner = NULL
            FROM unnest($1::text[], $2::float8[], $3::text[]) AS u(id, sent_at, ref)
            WHERE outbox.id = u.id RETURNING outbox.id
            """
        static let bindingDataTypes: [PostgresDataType] = [.textArray, .float8Array, .textArray]

        let marks: [MarkSentBatcher.Mark]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(marks.map(\.id))
            bindings.append(marks.map(\.sentAt))
            bindings.append(marks.map { $0.platformRef ?? "" })
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> String { try row.decode(String.self) }
    }
}
