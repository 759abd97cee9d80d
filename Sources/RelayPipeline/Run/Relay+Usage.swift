import Foundation
public import RelayCore

// `/usage`: what the asker, or the team, spent on models in a month (docs/admin.md, "Usage").
extension Relay {
    func usageCommand(_ sub: UsageSubcommand, _ request: RequestContext) async throws -> Reply {
        let event = request.event
        let month = sub.month ?? UsageMonth(containing: now())
        let query = UsageQuery(platform: event.platform, team: event.team, user: sub.team ? nil : event.user, from: month.start, to: month.end)
        let summary = UsageSummary(try await store.modelCalls(query))
        let whose = sub.team ? "The team's" : "Your"
        guard summary.commands > 0 else {
            return .info("\(whose) commands asked no model in \(month.name) (UTC).", title: "Usage")
        }
        var lines = ["\(whose) usage in \(month.name) (UTC): \(Self.usageLine(summary.total, count: "command"))."]
        lines.append("By command:")
        lines += summary.byCommand.map { "• \($0.name): \(Self.usageLine($0, count: "run"))" }
        lines.append("By model:")
        lines += summary.byModel.map { "• \($0.name): \(Self.usageLine($0, count: "call", split: true))" }
        if summary.total.estimated {
            lines.append("~ marks an estimate: a backend that reports no token counts is counted from the text's length.")
        }
        if summary.total.cost == nil || summary.byModel.contains(where: { $0.cost == nil }) {
            lines.append("A model without a price shows no cost: the operator sets `COUNCIL_<MODEL>_PRICE_IN` and `_OUT` (US dollars per million tokens).")
        }
        if sub.team, sub.month == nil || sub.month == UsageMonth(containing: now()),
            let limit = try await monthlyBudget(platform: event.platform, team: event.team), limit > 0
        {
            let spent = summary.total.cost ?? 0
            lines.append(
                "Budget: \(UsageFormat.dollars(spent)) of \(UsageFormat.dollars(limit)) (\(Int((spent / limit * 100).rounded(.down))) %); `/admin budget` for more."
            )
        }
        return .info(lines.joined(separator: "\n"), title: "Usage")
    }

    /// "3 runs · ~1,204 tokens (in 800, out 404) · $0.0012".
    static func usageLine(_ line: UsageSummary.Line, count noun: String, split: Bool = false) -> String {
        var parts = ["\(line.count) \(noun)\(line.count == 1 ? "" : "s")"]
        var tokens = (line.estimated ? "~" : "") + UsageFormat.tokens(line.tokens)
        if split { tokens += " (in \(line.tokensIn), out \(line.tokensOut))" }
        parts.append(tokens)
        parts.append(line.cost.map(UsageFormat.dollars) ?? "no price")
        return parts.joined(separator: " · ")
    }
}

/// The model calls as `rhea-relay usage export` writes them: JSON Lines (one call a line, every
/// field present, `cost` null without a price) or CSV with a header row.
public enum UsageExport {
    public static let csvHeader = "at,platform,team,user,command,run,model,tokens_in,tokens_out,estimated,cost_usd,elapsed_ms"

    public static func line(_ call: ModelCallRecord) -> String {
        let value: JSONValue = .object([
            "at": .string(timestamp(call.at)), "platform": .string(call.platform), "team": .string(call.team), "user": .string(call.user),
            "command": .string(call.command), "run": .string(call.run), "model": .string(call.model), "tokens_in": .int(call.tokensIn),
            "tokens_out": .int(call.tokensOut), "estimated": .bool(call.estimated), "cost_usd": call.cost.map(JSONValue.double) ?? .null,
            "elapsed_ms": .int(call.elapsedMilliseconds),
        ])
        return String(decoding: value.serialized() ?? Array("{}".utf8), as: UTF8.self)
    }

    public static func csvRow(_ call: ModelCallRecord) -> String {
        [
            timestamp(call.at), call.platform, call.team, call.user, call.command, call.run, call.model, "\(call.tokensIn)", "\(call.tokensOut)",
            call.estimated ? "true" : "false", call.cost.map { String(format: "%.10g", $0) } ?? "", "\(call.elapsedMilliseconds)",
        ].map(csvField).joined(separator: ",")
    }

    /// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. A field
    /// that a spreadsheet would read as a formula (`=`, `+`, `-`, `@` first) is prefixed with `'`,
    /// as OWASP advises: a team or user id comes from a platform, a model name from a gateway.
    static func csvField(_ text: String) -> String {
        var text = text
        if let first = text.first, "=+-@".contains(first), Double(text) == nil { text = "'" + text }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
