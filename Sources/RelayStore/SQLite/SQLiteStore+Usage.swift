public import RelayCore
import SQLiteNIO

public import struct Foundation.Date

// The model calls runs made (`model_calls`), written with each run's end.
extension SQLiteStore {
    public func modelCalls(_ query: UsageQuery) async throws -> [ModelCallRecord] {
        var sql = "SELECT * FROM model_calls WHERE team = ? AND at >= ? AND at < ?"
        var bindings: [SQLiteData] = [.text(query.team), .date(query.from), .date(query.to)]
        if let platform = query.platform {
            sql += " AND platform = ?"
            bindings.append(.text(platform))
        }
        if let user = query.user {
            sql += " AND user_id = ?"
            bindings.append(.text(user))
        }
        let select = sql + " ORDER BY at, id"
        let values = bindings
        return try await perform("read the model calls of team \(query.team)") { db in
            try db.query(select, values).map(ModelCallRecord.init(stored:))
        }
    }

    public func modelCostDays(platform: String, team: String, from: Date, to: Date) async throws -> [ModelCostDay] {
        let days = RunCount.days(touching: from, to)
        return try await perform("read the model costs of team \(team) by day") { db in
            try db.query(
                "SELECT * FROM model_call_days WHERE platform = ? AND team = ? AND day >= ? AND day < ?",
                [.text(platform), .text(team), .integer(days.lowerBound), .integer(days.upperBound)]
            ).map { row in
                ModelCostDay(
                    day: Date(timeIntervalSince1970: Double(try row.int("day")) * 86_400), model: try row.text("model"), calls: try row.int("calls"),
                    cost: try row.double("cost"), unpriced: try row.int("unpriced"), estimated: try row.int("estimated"))
            }
        }
    }

    static func insert(_ call: ModelCallRecord, _ db: Database) throws {
        _ = try db.query(
            """
            INSERT INTO model_calls (platform, team, user_id, command, run, model, tokens_in, tokens_out, estimated, cost, elapsed_ms, at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(call.platform), .text(call.team), .text(call.user), .text(call.command), .text(call.run), .text(call.model),
                .integer(call.tokensIn), .integer(call.tokensOut), .integer(call.estimated ? 1 : 0), .float(orNull: call.cost),
                .integer(call.elapsedMilliseconds), .date(call.at),
            ])
    }
}
