import Logging
public import RelayCore
import SQLiteNIO
import Synchronization

extension SQLiteStore {
    /// The settings stored for one scope; empty settings when none are stored.
    public func settings(_ scope: SettingsScope) async throws -> Settings {
        let key = SettingsKey(scope)
        if let cached = cache.settings(key) { return cached }
        let cache = cache
        let logger = logger
        return try await perform("read the settings of \(key)") { db in
            // Cached inside the operation: in the writer's order, so a later write's drop wins.
            let settings =
                try db.query(
                    "SELECT lang, tier, retention, voice, receipts, budget FROM settings WHERE scope_kind = ? AND team = ? AND subject = ?",
                    key.binds
                ).first.map { row in
                    Settings(
                        lang: row.optionalText("lang"),
                        tier: Self.decode(Tier.self, row.optionalText("tier"), column: "tier", key: key, logger: logger),
                        retention: Self.decode(Retention.self, row.optionalText("retention"), column: "retention", key: key, logger: logger),
                        voice: Self.decode(VoiceAction.self, row.optionalText("voice"), column: "voice", key: key, logger: logger),
                        receipts: Self.decode(ReceiptsColumn.self, row.optionalText("receipts"), column: "receipts", key: key, logger: logger)?.isOn,
                        budget: row.optionalDouble("budget"))
                } ?? Settings()
            cache.setSettings(settings, for: key)
            return settings
        }
    }

    /// Stores exactly `settings` for the scope (a nil field means "not set here"); all-nil settings
    /// delete the row, so an unset scope leaves nothing behind.
    public func saveSettings(_ settings: Settings, for scope: SettingsScope) async throws {
        let cache = cache
        try await perform("save the settings of \(SettingsKey(scope))") { db in try Self.save(settings, for: scope, cache, db) }
    }

    /// The save as a step of a larger operation (a run's end, `TeamChange`).
    static func save(_ settings: Settings, for scope: SettingsScope, _ cache: ReadCache, _ db: Database) throws {
        let key = SettingsKey(scope)
        cache.dropSettings(key)
        if settings.isEmpty {
            _ = try db.query("DELETE FROM settings WHERE scope_kind = ? AND team = ? AND subject = ?", key.binds)
            return
        }
        _ = try db.query(
            """
            INSERT INTO settings (scope_kind, team, subject, lang, tier, retention, voice, receipts, budget) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (scope_kind, team, subject) DO UPDATE SET
                lang = excluded.lang, tier = excluded.tier, retention = excluded.retention, voice = excluded.voice,
                receipts = excluded.receipts, budget = excluded.budget
            """,
            key.binds + [
                .text(orNull: settings.lang), .text(orNull: settings.tier?.rawValue), .text(orNull: settings.retention?.rawValue),
                .text(orNull: settings.voice?.rawValue), .text(orNull: settings.receipts.map(ReceiptsColumn.init)?.rawValue),
                .float(orNull: settings.budget),
            ])
    }

    private static func decode<Value: RawRepresentable<String>>(
        _ type: Value.Type, _ raw: String?, column: String, key: SettingsKey, logger: Logger
    ) -> Value? {
        guard let raw else { return nil }
        guard let value = Value(rawValue: raw) else {
            logger.warning(
                "Ignoring an unknown stored setting",
                metadata: ["setting": .string(column), "value": .string(raw), "scope": .string("\(key)")])
            return nil
        }
        return value
    }
}

extension SettingsKey {
    var binds: [SQLiteData] { [.text(kind), .text(team), .text(subject)] }
}

extension SQLiteStore {
    /// Inserts the command, or replaces the template of the team's command by that name. As with
    /// chains, the existing `creator` and `createdAt` are kept: editing does not transfer ownership.
    public func saveCustomCommand(_ command: CustomCommand) async throws {
        let cache = cache
        try await perform("save command '\(command.name)' of team \(command.team)") { db in try Self.save(command, cache, db) }
    }

    static func save(_ command: CustomCommand, _ cache: ReadCache, _ db: Database) throws {
        cache.dropCustomCommands(team: command.team)
        _ = try db.query(
            """
            INSERT INTO custom_commands (team, name, template, creator, created_at)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (team, name) DO UPDATE SET template = excluded.template
            """,
            [.text(command.team), .text(command.name), .text(command.template), .text(command.creator), .date(command.createdAt)])
    }

    /// The team's custom command with this name, if any.
    public func customCommand(team: String, name: String) async throws -> CustomCommand? {
        try await perform("read command '\(name)' of team \(team)") { db in
            try db.query(
                "SELECT * FROM custom_commands WHERE team = ? AND name = ?", [.text(team), .text(name)]
            ).first.map(CustomCommand.init(stored:))
        }
    }

    /// All custom commands of a team, ordered by name.
    public func customCommands(team: String) async throws -> [CustomCommand] {
        if let cached = cache.customCommands(team: team) { return cached }
        let cache = cache
        return try await perform("list the commands of team \(team)") { db in
            let commands = try db.query("SELECT * FROM custom_commands WHERE team = ? ORDER BY name", [.text(team)])
                .map(CustomCommand.init(stored:))
            // Cached inside the operation: in the writer's order, so a later write's drop wins.
            cache.setCustomCommands(commands, team: team)
            return commands
        }
    }

    /// Deletes the team's command with this name; returns whether one existed.
    public func deleteCustomCommand(team: String, name: String) async throws -> Bool {
        let cache = cache
        return try await perform("delete command '\(name)' of team \(team)") { db in
            try Self.deleteCustomCommand(team: team, name: name, cache, db)
        }
    }

    static func deleteCustomCommand(team: String, name: String, _ cache: ReadCache, _ db: Database) throws -> Bool {
        cache.dropCustomCommands(team: team)
        return try !db.query("DELETE FROM custom_commands WHERE team = ? AND name = ? RETURNING name", [.text(team), .text(name)]).isEmpty
    }
}

extension SQLiteStore {
    /// Inserts the chain, or replaces its source and `updatedAt` when the team already has one by
    /// that name. The existing `createdAt` and `creator` are kept: editing a chain does not transfer
    /// ownership, so its creator can still change it after an admin did.
    public func saveChain(_ chain: SavedChain) async throws {
        try await perform("save chain '\(chain.name)' of team \(chain.team)") { db in try Self.save(chain, db) }
    }

    static func save(_ chain: SavedChain, _ db: Database) throws {
        _ = try db.query(
            """
            INSERT INTO chains (team, name, source, creator, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (team, name) DO UPDATE SET source = excluded.source, updated_at = excluded.updated_at
            """,
            [
                .text(chain.team), .text(chain.name), .text(chain.source), .text(chain.creator),
                .date(chain.createdAt), .date(chain.updatedAt),
            ])
    }

    /// The team's chain with this name, if any.
    public func chain(team: String, name: String) async throws -> SavedChain? {
        try await perform("read chain '\(name)' of team \(team)") { db in
            try db.query(
                "SELECT * FROM chains WHERE team = ? AND name = ?", [.text(team), .text(name)]
            ).first.map(SavedChain.init(stored:))
        }
    }

    /// All chains of a team, ordered by name.
    public func chains(team: String) async throws -> [SavedChain] {
        try await perform("list the chains of team \(team)") { db in
            try db.query("SELECT * FROM chains WHERE team = ? ORDER BY name", [.text(team)])
                .map(SavedChain.init(stored:))
        }
    }

    /// Deletes the team's chain with this name; returns whether one existed.
    public func deleteChain(team: String, name: String) async throws -> Bool {
        try await perform("delete chain '\(name)' of team \(team)") { db in try Self.deleteChain(team: team, name: name, db) }
    }

    static func deleteChain(team: String, name: String, _ db: Database) throws -> Bool {
        try !db.query("DELETE FROM chains WHERE team = ? AND name = ? RETURNING name", [.text(team), .text(name)]).isEmpty
    }
}
