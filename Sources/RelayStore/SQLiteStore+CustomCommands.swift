public import RelayCore
import SQLiteNIO

extension SQLiteStore {
    /// Inserts the command, or replaces the template of the team's command by that name. As with
    /// chains, the existing `creator` and `createdAt` are kept: editing does not transfer ownership.
    public func saveCustomCommand(_ command: CustomCommand) async throws {
        try await perform("save command '\(command.name)' of team \(command.team)") { db in
            _ = try await db.query(
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
            try await db.query(
                "SELECT * FROM custom_commands WHERE team = ? AND name = ?", [.text(team), .text(name)]
            ).first.map(CustomCommand.init(row:))
        }
    }

    /// All custom commands of a team, ordered by name.
    public func customCommands(team: String) async throws -> [CustomCommand] {
        try await perform("list the commands of team \(team)") { db in
            try await db.query("SELECT * FROM custom_commands WHERE team = ? ORDER BY name", [.text(team)])
                .map(CustomCommand.init(row:))
        }
    }

    /// Deletes the team's command with this name; returns whether one existed.
    public func deleteCustomCommand(team: String, name: String) async throws -> Bool {
        try await perform("delete command '\(name)' of team \(team)") { db in
            try await !db.query(
                "DELETE FROM custom_commands WHERE team = ? AND name = ? RETURNING name", [.text(team), .text(name)]
            ).isEmpty
        }
    }
}

extension CustomCommand {
    init(row: SQLiteRow) throws {
        self.init(
            team: try row.text("team"), name: try row.text("name"), template: try row.text("template"),
            creator: try row.text("creator"), createdAt: try row.date("created_at"))
    }
}
