public import Foundation
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

    public func modelCostDays(platform: String, team: String, from: Date, to: Date) async throws -> [ModelCostDay] {
        let days = RunCount.days(touching: from, to)
        return try await query(
            "read the model costs of team \(team) by day",
            """
            SELECT day, model, sum(calls)::bigint AS calls, sum(cost)::double precision AS cost, sum(unpriced)::bigint AS unpriced,
                sum(estimated)::bigint AS estimated
            FROM model_call_days
            WHERE platform = \(PostgresJSON.withoutNUL(platform)) AND team = \(PostgresJSON.withoutNUL(team))
                AND day >= \(days.lowerBound) AND day < \(days.upperBound)
            GROUP BY 1, 2
            """
        ).map { row in
            ModelCostDay(
                day: Date(timeIntervalSince1970: Double(try row.int("day")) * 86_400), model: try row.text("model"), calls: try row.int("calls"),
                cost: try row.double("cost"), unpriced: try row.int("unpriced"), estimated: try row.int("estimated"))
        }
    }
}
