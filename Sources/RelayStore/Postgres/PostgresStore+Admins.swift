import PostgresNIO
public import RelayCore
import RelayPipeline

// The admin role granted here (`/admin grant`), shared by the replicas. Not cached: it is read
// only for a command that needs an admin, by one indexed read, and a revoke must hold at once on
// every replica.
extension PostgresStore {
    public func adminGrants(platform: String, team: String) async throws -> [AdminGrant] {
        try await query(
            "list the admins granted in team \(team) on \(platform)",
            """
            SELECT * FROM admin_grants WHERE platform = \(PostgresJSON.withoutNUL(platform)) AND team = \(PostgresJSON.withoutNUL(team))
            ORDER BY granted_at, user_id
            """
        ).map(AdminGrant.init(stored:))
    }

    public func adminGrant(platform: String, team: String, user: String) async throws -> AdminGrant? {
        try await query(
            "read the admin grant of a user in team \(team) on \(platform)",
            """
            SELECT * FROM admin_grants WHERE platform = \(PostgresJSON.withoutNUL(platform)) AND team = \(PostgresJSON.withoutNUL(team))
                AND user_id = \(PostgresJSON.withoutNUL(user))
            """
        ).first.map(AdminGrant.init(stored:))
    }
}
