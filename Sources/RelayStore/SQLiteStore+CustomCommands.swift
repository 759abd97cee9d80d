public import RelayCore
import SQLiteNIO

extension SQLiteStore {
    /// Inserts the command, or replaces the template of the team's command by that name. As with
    /// chains, the existing `creator` and `createdAt` are kept: editing does not transfer ownership.
    public func saveCustomCommand(_ command: CustomCommand) async throws {
        let cache = cache
        try await perform("save command '\(command.name)' of team \(command.team)") { db in
            cache.dropCustomCommands(team: command.team)
            _ = try db.query(
                """
                INSERT INTO custom_commands (team, name, template, creator, created_at)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (team, name) DO UPDATE SET template = excluded.template
                """,
                [
                    .text(command.team), .text(command.name), .text(command.template), .text(command.creator),
                    .date(command.createdAt),
                ])
        }
    }

    /// The team's custom command with this name, if any.
    public func customCommand(team: String, name: String) async throws -> CustomCommand? {
        try await perform("read command '\(name)' of team \(team)") { db in
            try db.query(
                "SELECT * FROM custom_commands WHERE team = ? AND name = ?", [.text(team), .text(name)]
            ).first.map(CustomCommand.init(row:))
        }
    }

    /// All custom commands of a team, ordered by name.
    public func customCommands(team: String) async throws -> [CustomCommand] {
        if let cached = cache.customCommands(team: team) { return cached }
        let cache = cache
        return try await perform("list the commands of team \(team)") { db in
            let commands = try db.query("SELECT * FROM custom_commands WHERE team = ? ORDER BY name", [.text(team)])
                .map(CustomCommand.init(row:))
            // Cached inside the operation: in the writer's order, so a later write's drop wins.
            cache.setCustomCommands(commands, team: team)
            return commands
        }
    }

    /// Deletes the team's command with this name; returns whether one existed.
    public func deleteCustomCommand(team: String, name: String) async throws -> Bool {
        let cache = cache
        return try await perform("delete command '\(name)' of team \(team)") { db in
            cache.dropCustomCommands(team: team)
            return try !db.query(
                "DELETE FROM custom_commands WHERE team = ? AND name = ? RETURNING name", [.text(team), .text(name)]
            ).isEmpty
        }
    }
}

extension CustomCommand {
    init(row: SQLRow) throws {
        self.init(
            team: try row.text("team"), name: try row.text("name"), template: try row.text("template"),
            creator: try row.text("creator"), createdAt: try row.date("created_at"))
    }
}
