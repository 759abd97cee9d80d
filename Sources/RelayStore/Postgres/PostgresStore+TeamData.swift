import Foundation
import Logging
import PostgresNIO
public import RelayCore
import RelayPipeline

// Settings, custom commands and chains. A write notifies the other replicas in its transaction
// (`relay_team_data`, delivered at commit) so they drop what they cached of that team.
extension PostgresStore {
    /// The notification channel for team-data writes; the payload is the team.
    static var teamDataChannel: String { PostgresListener.teamData }

    public func settings(_ scope: SettingsScope) async throws -> Settings {
        let key = SettingsKey(scope)
        let generation = cache.generation
        let cached = teamCacheIsLive
        if cached, let settings = cache.settings(key) { return settings }
        let row = try await query(
            "read the settings of \(key)",
            "SELECT lang, tier, retention, voice, receipts, budget FROM settings WHERE scope_kind = \(key.kind) AND team = \(key.team) AND subject = \(key.subject)"
        ).first
        let settings =
            try row.map { row in
                Settings(
                    lang: try row.optionalText("lang"),
                    tier: decode(Tier.self, try row.optionalText("tier"), column: "tier", key: key),
                    retention: decode(Retention.self, try row.optionalText("retention"), column: "retention", key: key),
                    voice: decode(VoiceAction.self, try row.optionalText("voice"), column: "voice", key: key),
                    receipts: decode(ReceiptsColumn.self, try row.optionalText("receipts"), column: "receipts", key: key)?.isOn,
                    budget: try row.optionalDouble("budget"))
            } ?? Settings()
        if cached { cache.setSettings(settings, for: key, readAt: generation) }
        return settings
    }

    public func saveSettings(_ settings: Settings, for scope: SettingsScope) async throws {
        try await change(.saveSettings(settings, scope), "save the settings of \(SettingsKey(scope))")
    }

    public func saveCustomCommand(_ command: CustomCommand) async throws {
        try await change(.saveCustomCommand(command), "save command '\(command.name)' of team \(command.team)")
    }

    public func customCommand(team: String, name: String) async throws -> CustomCommand? {
        try await query(
            "read command '\(name)' of team \(team)",
            "SELECT * FROM custom_commands WHERE team = \(PostgresJSON.withoutNUL(team)) AND name = \(PostgresJSON.withoutNUL(name))"
        ).first.map(CustomCommand.init(stored:))
    }

    public func customCommands(team: String) async throws -> [CustomCommand] {
        let generation = cache.generation
        let cached = teamCacheIsLive
        if cached, let commands = cache.customCommands(team: team) { return commands }
        let commands = try await query(
            "list the commands of team \(team)", "SELECT * FROM custom_commands WHERE team = \(PostgresJSON.withoutNUL(team)) ORDER BY name"
        ).map(CustomCommand.init(stored:))
        if cached { cache.setCustomCommands(commands, team: team, readAt: generation) }
        return commands
    }

    public func deleteCustomCommand(team: String, name: String) async throws -> Bool {
        try await change(.deleteCustomCommand(team: team, name: name), "delete command '\(name)' of team \(team)")
    }

    public func saveChain(_ chain: SavedChain) async throws {
        try await change(.saveChain(chain), "save chain '\(chain.name)' of team \(chain.team)")
    }

    public func chain(team: String, name: String) async throws -> SavedChain? {
        try await query(
            "read chain '\(name)' of team \(team)",
            "SELECT * FROM chains WHERE team = \(PostgresJSON.withoutNUL(team)) AND name = \(PostgresJSON.withoutNUL(name))"
        ).first.map(SavedChain.init(stored:))
    }

    public func chains(team: String) async throws -> [SavedChain] {
        try await query("list the chains of team \(team)", "SELECT * FROM chains WHERE team = \(PostgresJSON.withoutNUL(team)) ORDER BY name")
            .map(SavedChain.init(stored:))
    }

    public func deleteChain(team: String, name: String) async throws -> Bool {
        try await change(.deleteChain(team: team, name: name), "delete chain '\(name)' of team \(team)")
    }

    /// One change on its own: applied and announced in one transaction; whether it found what
    /// it changes (a delete or a mark of something that is not there is false).
    @discardableResult
    func change(_ change: TeamChange, _ operation: @autoclosure () -> String) async throws -> Bool {
        let found = try await transaction(operation()) { connection in try await Self.apply(change, connection) }
        dropCached(for: [change])
        return found
    }

    /// One change a command asked of the team's data, as a step of a transaction; announced to
    /// the other replicas at commit. Returns whether it found what it changes.
    @discardableResult
    static func apply(_ change: TeamChange, _ connection: PostgresTransaction) async throws -> Bool {
        let text: (String) -> String = PostgresJSON.withoutNUL(_:)
        let team: String
        let found: Bool
        switch change {
        case .saveSettings(let settings, let scope):
            let key = SettingsKey(scope)
            team = key.team
            if settings.isEmpty {
                try await connection.query(
                    "DELETE FROM settings WHERE scope_kind = \(key.kind) AND team = \(text(key.team)) AND subject = \(text(key.subject))")
            } else {
                try await connection.query(
                    """
                    INSERT INTO settings (scope_kind, team, subject, lang, tier, retention, voice, receipts, budget)
                    VALUES (\(key.kind), \(text(key.team)), \(text(key.subject)), \(settings.lang.map(text)), \(settings.tier?.rawValue), \(settings.retention?.rawValue), \(settings.voice?.rawValue), \(settings.receipts.map(ReceiptsColumn.init)?.rawValue), \(settings.budget))
                    ON CONFLICT (scope_kind, team, subject) DO UPDATE SET
                        lang = excluded.lang, tier = excluded.tier, retention = excluded.retention, voice = excluded.voice,
                        receipts = excluded.receipts, budget = excluded.budget
                    """)
            }
            found = true
        case .saveCustomCommand(let command):
            team = command.team
            try await connection.query(
                """
                INSERT INTO custom_commands (team, name, template, creator, created_at)
                VALUES (\(text(command.team)), \(text(command.name)), \(text(command.template)), \(text(command.creator)), \(command.createdAt.timeIntervalSince1970))
                ON CONFLICT (team, name) DO UPDATE SET template = excluded.template
                """)
            found = true
        case .deleteCustomCommand(let commandTeam, let name):
            team = commandTeam
            found = try await !connection.query(
                "DELETE FROM custom_commands WHERE team = \(text(commandTeam)) AND name = \(text(name)) RETURNING name"
            ).isEmpty
        case .saveChain(let chain):
            team = chain.team
            try await connection.query(
                """
                INSERT INTO chains (team, name, source, creator, created_at, updated_at)
                VALUES (\(text(chain.team)), \(text(chain.name)), \(text(chain.source)), \(text(chain.creator)),
                    \(chain.createdAt.timeIntervalSince1970), \(chain.updatedAt.timeIntervalSince1970))
                ON CONFLICT (team, name) DO UPDATE SET source = excluded.source, updated_at = excluded.updated_at
                """)
            found = true
        case .deleteChain(let chainTeam, let name):
            team = chainTeam
            found = try await !connection.query("DELETE FROM chains WHERE team = \(text(chainTeam)) AND name = \(text(name)) RETURNING name").isEmpty
        case .markLedger(let ledgerTeam, let id, let mark):
            team = ledgerTeam
            found = try await !connection.query(
                """
                UPDATE ledger SET mark_verdict = \(mark.verdict.rawValue), marked_by = \(text(mark.user)),
                    marked_at = \(mark.markedAt.timeIntervalSince1970)
                WHERE team = \(text(ledgerTeam)) AND id = \(id) RETURNING id
                """
            ).isEmpty
        case .forget(let forgetTeam, let user):
            team = forgetTeam
            try await connection.query("DELETE FROM history WHERE team = \(text(forgetTeam)) AND user_id = \(text(user))")
            try await connection.query("DELETE FROM ledger WHERE team = \(text(forgetTeam)) AND user_id = \(text(user))")
            found = true
        case .grantAdmin(let grant):
            team = grant.team
            found = try await !connection.query(
                """
                INSERT INTO admin_grants (platform, team, user_id, user_name, granted_by, granted_at)
                VALUES (\(text(grant.platform)), \(text(grant.team)), \(text(grant.user)), \(text(grant.userName)), \(text(grant.grantedBy)),
                    \(grant.grantedAt.timeIntervalSince1970))
                ON CONFLICT (platform, team, user_id) DO NOTHING RETURNING user_id
                """
            ).isEmpty
        case .revokeAdmin(let platform, let grantTeam, let user):
            team = grantTeam
            found = try await !connection.query(
                "DELETE FROM admin_grants WHERE platform = \(text(platform)) AND team = \(text(grantTeam)) AND user_id = \(text(user)) RETURNING user_id"
            ).isEmpty
        }
        if change.touchesCachedReads {
            try await connection.query("SELECT pg_notify(\(teamDataChannel), \(text(team)))")
        }
        return found
    }

    /// After this replica's own write: what it cached of those teams is read again.
    func dropCached(for changes: [TeamChange]) {
        for change in changes {
            switch change {
            case .saveSettings(_, let scope): cache.dropSettings(SettingsKey(scope))
            case .saveCustomCommand(let command): cache.dropCustomCommands(team: command.team)
            case .deleteCustomCommand(let team, _): cache.dropCustomCommands(team: team)
            default: break
            }
        }
    }

    private func decode<Value: RawRepresentable<String>>(_ type: Value.Type, _ raw: String?, column: String, key: SettingsKey) -> Value? {
        guard let raw else { return nil }
        guard let value = Value(rawValue: raw) else {
            logger.warning(
                "Ignoring an unknown stored setting", metadata: ["setting": .string(column), "value": .string(raw), "scope": .string("\(key)")])
            return nil
        }
        return value
    }
}

extension TeamChange {
    /// Whether the change is to what replicas cache (settings, custom commands).
    var touchesCachedReads: Bool {
        switch self {
        case .saveSettings, .saveCustomCommand, .deleteCustomCommand: true
        default: false
        }
    }
}
