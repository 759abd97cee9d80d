import Foundation
import RelayCore
import RelayPipeline

/// The ledger (docs/console.md): the team's fact-checks, searched with the store's full-text
/// index as `/ledger search` does, each with its verdict, score, the models' votes and its mark;
/// admins mark them here as with `/ledger mark` (the same run, so the same checks and record).
struct LedgerPage {
    /// At most this many entries a page, newest first.
    static let limit = 50
    /// What a search may hold: a few words, each of a bounded length.
    static let maxWords = 10
    static let maxWordLength = 64

    let relay: Relay
    let grant: ConsoleGrant
    let csrf: String
    let base: String

    /// The search box's words: what `/ledger search` would take.
    static func words(_ query: String) -> [String] {
        Array(query.split(whereSeparator: \.isWhitespace).prefix(maxWords).map { String($0.prefix(maxWordLength)) })
    }

    func body(query: String, marked: Int64?) async throws -> TrustedHTML {
        let words = Self.words(query)
        let entries = try await relay.store.searchLedger(team: grant.team, words: words, limit: Self.limit)
        var notice: TrustedHTML?
        if let marked, let entry = try await relay.store.ledgerEntry(team: grant.team, id: marked), let mark = entry.mark {
            notice = ConsoleHTML.chatText(
                "Marked fact-check #\(marked) as \(mark.verdict.rawValue). The council counts people's marks when it learns which models to trust.")
        }
        let rows = entries.map { entry in
            LedgerRow(
                id: String(entry.id), date: ConsoleDates.day(entry.createdAt), claim: entry.claim ?? "(text not kept: the team's retention)",
                verdict: entry.verdict?.rawValue ?? "none", score: Self.score(entry), models: "\(entry.answered)/\(entry.asked)",
                votes: entry.judges.map { judge in
                    let confidence = judge.confidence.map { " \(Int(($0 * 100).rounded())) %" } ?? ""
                    return LedgerVote(model: judge.model, said: judge.error != nil ? "failed" : (judge.verdict?.rawValue ?? "no verdict") + confidence)
                },
                mark: entry.mark.map { "\($0.verdict.rawValue), by \($0.user), \(ConsoleDates.day($0.markedAt))" })
        }
        let values = LedgerValues(
            base: base, action: base + ConsoleRoutes.segment(grant.platform) + "/" + ConsoleRoutes.segment(grant.team) + "/ledger", query: query,
            notice: notice, csrf: csrf, hasEntries: !rows.isEmpty, entries: rows,
            summary: words.isEmpty
                ? "The newest \(Self.count(rows.count))." : "\(Self.count(rows.count)) whose claim holds every word searched.")
        return TrustedHTML(html: ConsoleTemplates.render("ledger", values))
    }

    static func count(_ n: Int) -> String { n == 1 ? "1 fact-check" : "\(n) fact-checks" }

    /// The score as the reply showed it: the probability the verdict is right, or the models'
    /// agreement, or the share that answered.
    static func score(_ entry: LedgerEntry) -> String {
        let percent = "\(Int((entry.score * 100).rounded())) %"
        switch entry.scoreMeaning {
        case .probabilityRight: return "\(percent) likely right"
        case .agreement: return "\(percent) agreement"
        case .answeredShare: return "\(percent) answered"
        }
    }
}

struct LedgerValues {
    var base: String
    var action: String
    var query: String
    var notice: TrustedHTML?
    var csrf: String
    var hasEntries: Bool
    var entries: [LedgerRow]
    var summary: String
}

struct LedgerRow {
    var id: String
    var date: String
    var claim: String
    var verdict: String
    var score: String
    var models: String
    var votes: [LedgerVote]
    var mark: String?
}

struct LedgerVote {
    var model: String
    var said: String
}
