import Foundation
public import RelayCore

extension Relay {
    /// How many entries `/ledger` lists, and how many `/ledger export` writes into chat.
    static let ledgerListLength = 10
    static let ledgerExportLimit = 1000

    func ledgerCommand(_ sub: LedgerSubcommand, _ request: RequestContext) async throws -> Reply {
        let team = request.event.team
        switch sub {
        case .search(let words):
            let entries = try await store.searchLedger(team: team, words: words, limit: Self.ledgerListLength)
            guard !entries.isEmpty else {
                return .info(
                    words.isEmpty
                        ? "No fact-checks yet. `/tribunal CLAIM` asks several models; each answer is kept here for the team."
                        : "No fact-check's claim holds \(words.map { "“\($0)”" }.joined(separator: " and ")). `/ledger` lists the newest.")
            }
            let title = words.isEmpty ? "The team's newest fact-checks" : "Fact-checks about \(words.joined(separator: " "))"
            return .info(entries.map(Self.ledgerLine).joined(separator: "\n"), title: title)
        case .show(let id):
            guard let entry = try await store.ledgerEntry(team: team, id: id) else { return .error(Self.noSuchEntry(id)) }
            return .info(Self.ledgerDetail(entry), title: "Fact-check #\(entry.id)")
        case .export:
            let entries = try await store.ledgerEntries(team: team)
            guard !entries.isEmpty else { return .info("The ledger is empty: nothing to export.") }
            let shown = entries.suffix(Self.ledgerExportLimit)
            var body = shown.map(LedgerExport.line).joined(separator: "\n")
            if shown.count < entries.count {
                body = "(the newest \(shown.count) of \(entries.count); `rhea-relay ledger export --team \(team)` writes them all)\n" + body
            }
            return .info(body, title: "Ledger export · JSON Lines · \(shown.count) entr\(shown.count == 1 ? "y" : "ies")")
        case .mark(let id, let value):
            guard let entry = try await store.ledgerEntry(team: team, id: id) else { return .error(Self.noSuchEntry(id)) }
            let verdict: Verdict
            switch (value, entry.verdict) {
            case (.verdict(let said), _): verdict = said
            case (.right, let recorded?) where recorded != .unverifiable: verdict = recorded
            // Wrong about true or false: the other one. Wrong about partly: it cannot be told.
            case (.wrong, .true?): verdict = .false
            case (.wrong, .false?): verdict = .true
            default:
                return .error(
                    "Fact-check #\(id)'s verdict was \(entry.verdict?.rawValue ?? "none"), so right or wrong does not say which verdict is: use `/ledger mark \(id) true`, `false` or `partly`."
                )
            }
            let mark = LedgerMark(verdict: verdict, user: request.event.user, markedAt: now())
            request.recorder.keep(.markLedger(team: team, id: id, mark: mark))
            return .info(
                "Marked fact-check #\(id) as \(verdict.rawValue). The council counts people's marks when it learns which models to trust.")
        }
    }

    /// `/council`: each model's learned record, and how the score is calibrated.
    func councilCommand() async -> Reply {
        guard let report = await tribunal.councilReport() else {
            return .info(
                "The backend is the Rhea Tribunal gateway, which picks its own models: this relay keeps no record of them. With `tribunal.backend: council` the relay asks its own models and learns from the ledger which to trust."
            )
        }
        var lines = report.judges.map { judge in
            let record =
                judge.judged == 0
                ? "accuracy \(Self.twoDecimals(judge.accuracy)), its prior: no verdicts yet"
                : "accuracy \(Self.twoDecimals(judge.accuracy)) ± \(Self.twoDecimals((judge.spread * 100 - 1e-9).rounded(.up) / 100)) over \(judge.judged) verdict\(judge.judged == 1 ? "" : "s")"
            let handSet = judge.configuredWeight == 1 ? "" : " (hand-set weight \(Self.decimal(judge.configuredWeight)) as its prior)"
            // Shown only where it matters: a judge that repeats another's verdicts on 5 % of claims or more.
            let repeated = judge.repeats.filter { $0.value >= 0.05 }.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            let percent = { (share: Double) in "\(Int((share * 100).rounded())) %" }
            let partners = repeated.enumerated().map { index, pair in
                index == 0 ? "\(pair.key)'s verdict on about \(percent(pair.value)) of claims" : "\(pair.key)'s on \(percent(pair.value))"
            }
            let shared =
                partners.isEmpty
                ? ""
                : " · repeats \(partners.joined(separator: ", ")) (shared mistakes: they agree more than their records explain),"
                    + " so where they agree its vote adds little"
            return "• \(judge.model) (\(judge.tier.rawValue)): \(record) · weight \(Self.decimal(judge.weight))\(handSet)\(shared)"
        }
        lines.append(
            "Learned from \(report.claims) fact-check\(report.claims == 1 ? "" : "s") (\(report.marked) marked by people) without knowing the answers: from how the models agree and disagree. Votes weigh by each model's record, not by the confidence it states; ± is how far that record moves when the history is resampled."
        )
        lines.append("Score: \(report.calibration)")
        return .info(lines.joined(separator: "\n"), title: "The council")
    }

    /// `0.82`: an accuracy or its spread, two decimals.
    static func twoDecimals(_ value: Double) -> String {
        guard value.isFinite else { return "0.00" }
        let hundredths = Int((min(max(value, 0), 1) * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }

    static func decimal(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        return String((value * 100).rounded() / 100)
    }

    static func noSuchEntry(_ id: Int64) -> String {
        "There is no fact-check #\(id) in this team. `/ledger` lists the newest; `/ledger WORDS` searches them."
    }

    static func ledgerDate(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]
        return formatter.string(from: date)
    }

    /// `#12 · 2026-11-24 14:03:11 UTC · false · 82% likely right · 3/3 models · The Eiffel Tower is in Berlin`
    /// (the score in the reply's words, `ScoreWords`; no figure where there is no verdict).
    static func ledgerLine(_ entry: LedgerEntry) -> String {
        var line = "#\(entry.id) · \(ledgerDate(entry.createdAt)) UTC · "
        let score = ScoreWords.inSentence(entry.score, meaning: entry.scoreMeaning, verdict: entry.verdict)
        line += entry.verdict.map { "\($0.rawValue) · \(score)" } ?? (entry.scoreMeaning == .probabilityRight ? score : "no verdict · \(score)")
        line += " · \(entry.answered)/\(entry.asked) models"
        if let mark = entry.mark { line += " · marked \(mark.verdict.rawValue)" }
        let claim = entry.claim.map { $0.count > 100 ? String($0.prefix(99)) + "…" : $0 } ?? "(text not kept)"
        return line + " · " + claim.replacingOccurrences(of: "\n", with: " ")
    }

    /// One entry with each judge's verdict, confidence, time and answer.
    static func ledgerDetail(_ entry: LedgerEntry) -> String {
        var lines = ["Claim: \(entry.claim ?? "(text not kept: retention was metadata)")"]
        let score = ScoreWords.score(entry.score, meaning: entry.scoreMeaning, verdict: entry.verdict)
        lines.append("Verdict: \(entry.verdict?.rawValue ?? "none") · \(score) · \(entry.answered)/\(entry.asked) models")
        lines.append(
            "Asked \(ledgerDate(entry.createdAt)) UTC by \(entry.user) in \(entry.channel) (\(entry.origin.rawValue)) · backend \(entry.backend)"
                + (entry.promptsVersion.map { " · \($0)" } ?? ""))
        if let mark = entry.mark {
            lines.append("Marked \(mark.verdict.rawValue) by \(mark.user) on \(ledgerDate(mark.markedAt)) UTC")
        }
        if let answer = entry.answer { lines.append("Answer: \(answer)") }
        for judge in entry.judges {
            var head = "• \(judge.model): "
            if let error = judge.error {
                head += "no answer — \(error)"
            } else {
                head += judge.verdict?.rawValue ?? "no verdict"
                if let confidence = judge.confidence { head += " (confidence \(Int((confidence * 100).rounded()))%)" }
            }
            if let latency = judge.latency { head += " · \(AgreementFooter.seconds(.clampedSeconds(latency)))" }
            if let answer = judge.answer { head += "\n  " + answer.replacingOccurrences(of: "\n", with: "\n  ") }
            lines.append(head)
        }
        return lines.joined(separator: "\n")
    }
}

/// `/ledger export`'s JSON Lines: one object per entry, keys sorted, dates in ISO 8601.
public enum LedgerExport {
    public static func line(_ entry: LedgerEntry) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return (try? encoder.encode(entry)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
