public import RelayCore
import SQLiteNIO

extension SQLiteStore {
    /// Inserts the chain, or replaces its source and `updatedAt` when the team already has one by
    /// that name. The existing `createdAt` and `creator` are kept: editing a chain does not transfer
    /// ownership, so its creator can still change it after an admin did.
    public func saveChain(_ chain: SavedChain) async throws {
        try await perform("save chain '\(chain.name)' of team \(chain.team)") { db in
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
    }

    /// The team's chain with this name, if any.
    public func chain(team: String, name: String) async throws -> SavedChain? {
        try await perform("read chain '\(name)' of team \(team)") { db in
            try db.query(
                "SELECT * FROM chains WHERE team = ? AND name = ?", [.text(team), .text(name)]
            ).first.map(SavedChain.init(row:))
        }
    }

    /// All chains of a team, ordered by name.
    public func chains(team: String) async throws -> [SavedChain] {
        try await perform("list the chains of team \(team)") { db in
            try db.query("SELECT * FROM chains WHERE team = ? ORDER BY name", [.text(team)])
                .map(SavedChain.init(row:))
        }
    }

    /// Deletes the team's chain with this name; returns whether one existed.
    public func deleteChain(team: String, name: String) async throws -> Bool {
        try await perform("delete chain '\(name)' of team \(team)") { db in
            try !db.query(
                "DELETE FROM chains WHERE team = ? AND name = ? RETURNING name", [.text(team), .text(name)]
            ).isEmpty
        }
    }
}

extension SavedChain {
    init(row: SQLRow) throws {
        self.init(
            team: try row.text("team"), name: try row.text("name"), source: try row.text("source"),
            creator: try row.text("creator"), createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at"))
    }
}
