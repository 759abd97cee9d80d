public import RelayCore
import SQLiteNIO

// The admin role granted here (`/admin grant`). Not cached: it is read only for a command that
// needs an admin, by one indexed read.
extension SQLiteStore {
    public func adminGrants(platform: String, team: String) async throws -> [AdminGrant] {
        try await perform("list the admins granted in team \(team) on \(platform)") { db in
            try db.query(
                "SELECT * FROM admin_grants WHERE platform = ? AND team = ? ORDER BY granted_at, user_id", [.text(platform), .text(team)]
            ).map(AdminGrant.init(stored:))
        }
    }

    public func adminGrant(platform: String, team: String, user: String) async throws -> AdminGrant? {
        try await perform("read the admin grant of a user in team \(team) on \(platform)") { db in
            try db.query(
                "SELECT * FROM admin_grants WHERE platform = ? AND team = ? AND user_id = ?", [.text(platform), .text(team), .text(user)]
            ).first.map(AdminGrant.init(stored:))
        }
    }

    /// A grant as a step of the run's end; a user granted already keeps the first grant.
    static func insert(_ grant: AdminGrant, _ db: Database) throws {
        _ = try db.query(
            """
            INSERT INTO admin_grants (platform, team, user_id, user_name, granted_by, granted_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (platform, team, user_id) DO NOTHING
            """,
            [.text(grant.platform), .text(grant.team), .text(grant.user), .text(grant.userName), .text(grant.grantedBy), .date(grant.grantedAt)])
    }

    static func revokeAdmin(platform: String, team: String, user: String, _ db: Database) throws {
        _ = try db.query("DELETE FROM admin_grants WHERE platform = ? AND team = ? AND user_id = ?", [.text(platform), .text(team), .text(user)])
    }
}
