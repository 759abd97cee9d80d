import Foundation
import PostgresNIO
public import RelayCore

// The model calls runs made (`model_calls`), written by `relay_finish_run`.
extension PostgresStore {
    public func modelCalls(_ query: UsageQuery) async throws -> [ModelCallRecord] {
        // An empty platform or user stands for any: no platform's id, and no user's, is empty.
        let platform = PostgresJSON.withoutNUL(query.platform ?? "")
        let user = PostgresJSON.withoutNUL(query.user ?? "")
        return try await self.query(
            "read the model calls of team \(query.team)",
            """
            SELECT * FROM model_calls WHERE team = \(PostgresJSON.withoutNUL(query.team))
                AND at >= \(query.from.timeIntervalSince1970) AND at < \(query.to.timeIntervalSince1970)
                AND (\(platform) = '' OR platform = \(platform)) AND (\(user) = '' OR user_id = \(user))
            ORDER BY at, id
            """
        ).map(ModelCallRecord.init(stored:))
    }
}
