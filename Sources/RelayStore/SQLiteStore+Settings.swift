import Logging
public import RelayCore
import SQLiteNIO

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
                    "SELECT lang, tier, retention FROM settings WHERE scope_kind = ? AND team = ? AND subject = ?",
                    key.binds
                ).first.map { row in
                    Settings(
                        lang: row.optionalText("lang"),
                        tier: Self.decode(Tier.self, row.optionalText("tier"), column: "tier", key: key, logger: logger),
                        retention: Self.decode(Retention.self, row.optionalText("retention"), column: "retention", key: key, logger: logger))
                } ?? Settings()
            cache.setSettings(settings, for: key)
            return settings
        }
    }

    /// Stores exactly `settings` for the scope (a nil field means "not set here"); all-nil settings
    /// delete the row, so an unset scope leaves nothing behind.
    public func saveSettings(_ settings: Settings, for scope: SettingsScope) async throws {
        let key = SettingsKey(scope)
        let cache = cache
        try await perform("save the settings of \(key)") { db in
            cache.dropSettings(key)
            if settings.isEmpty {
                _ = try db.query(
                    "DELETE FROM settings WHERE scope_kind = ? AND team = ? AND subject = ?", key.binds)
                return
            }
            _ = try db.query(
                """
                INSERT INTO settings (scope_kind, team, subject, lang, tier, retention) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (scope_kind, team, subject) DO UPDATE SET
                    lang = excluded.lang, tier = excluded.tier, retention = excluded.retention
                """,
                key.binds + [
                    .text(orNull: settings.lang), .text(orNull: settings.tier?.rawValue),
                    .text(orNull: settings.retention?.rawValue),
                ])
        }
    }

    /// A value a newer rhea-relay may have written (a tier this code does not know) reads as "not
    /// set" with a warning, rather than making every command of that user fail.
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

/// A settings scope as its primary-key columns.
struct SettingsKey: Hashable, Sendable, CustomStringConvertible {
    let kind: String
    let team: String
    let subject: String

    init(_ scope: SettingsScope) {
        switch scope {
        case .user(let team, let user): (kind, self.team, subject) = ("user", team, user)
        case .channel(let team, let channel): (kind, self.team, subject) = ("channel", team, channel)
        }
    }

    var binds: [SQLiteData] { [.text(kind), .text(team), .text(subject)] }

    var description: String { "\(kind) \(subject) in team \(team)" }
}
