import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Testing

/// A backend whose consensus names every judge, as the council's does.
private struct JudgingTribunal: Tribunal {
    func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult {
        QuickResult(text: "[fixed] \(request.text)", elapsed: .milliseconds(5))
    }

    func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        ConsensusResult(
            answer: "No: it is in Paris.", verdict: .false, agreement: 0.75, answered: 2, asked: 3, elapsed: .milliseconds(30),
            judges: [
                JudgeVote(model: "mini", verdict: .false, confidence: 0.9, answer: "It is in Paris.", latency: .milliseconds(1200)),
                JudgeVote(model: "local", verdict: .true, confidence: 0.55, answer: "Berlin, surely.", latency: .milliseconds(800)),
                JudgeVote(model: "slow", answer: "", error: "did not answer in time"),
            ],
            backend: "council", promptsVersion: "council-prompts/1")
    }

    func health() async throws(TribunalError) -> BackendHealth { BackendHealth(endpoint: "judging", status: "ok") }
}

@Suite("Relay: the fact-check ledger (/ledger)")
struct LedgerCommandTests {
    func withRelay(_ body: (Relay, any Store) async throws -> Void) async throws {
        let store = MemoryStore()
        try await body(Relay(tribunal: JudgingTribunal(), store: store, configuration: RelayConfiguration(operatorAdmins: RelayHarness.admins)), store)
    }

    func send(_ relay: Relay, _ text: String, team: String = "t", user: String = "ada", external: Bool = false, repliedTo: String? = nil) async -> Reply {
        let event = Event(platform: "test", team: team, channel: "c", user: user, text: text, repliedTo: repliedTo, isExternal: external)
        return await relay.handle(event) ?? .info("<duplicate>")
    }

    @Test func aTribunalIsRecordedListedSearchedAndShownJudgeByJudge() async throws {
        try await withRelay { relay, store in
            _ = await send(relay, "/tribunal The Eiffel Tower is in Berlin")
            _ = await send(relay, "/tribunal Water boils at 100 °C at sea level")
            let id = try #require(try await store.searchLedger(team: "t", words: ["eiffel"], limit: 5).first?.id)

            let list = await send(relay, "/ledger")
            #expect(list.kind == .info)
            let lines = list.body.split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines.last?.contains("#\(id) · ") == true)
            #expect(lines.last?.contains("false · agreement 75% · 2/3 models · The Eiffel Tower is in Berlin") == true, "\(lines)")

            let found = await send(relay, "/ledger eiffel BERL")
            #expect(found.body.contains("The Eiffel Tower is in Berlin") && !found.body.contains("Water"))
            #expect(await send(relay, "/ledger rome").body.contains("No fact-check's claim holds “rome”"))

            let shown = await send(relay, "/ledger show #\(id)")
            #expect(shown.title == "Fact-check #\(id)")
            for expected in [
                "Claim: The Eiffel Tower is in Berlin", "Verdict: false · Agreement 75% · 2/3 models", "(tribunal) · backend council · council-prompts/1",
                "• mini: false (confidence 90%) · 1.2 s\n  It is in Paris.", "• local: true (confidence 55%)", "• slow: no answer — did not answer in time",
                "Answer: No: it is in Paris.",
            ] {
                #expect(shown.body.contains(expected), "missing: \(expected)\n\(shown.body)")
            }
        }
    }

    @Test func anotherTeamSeesNothingAndAGuestMayNotLook() async throws {
        try await withRelay { relay, store in
            _ = await send(relay, "/tribunal The Eiffel Tower is in Berlin")
            let id = try #require(try await store.ledgerEntries(team: "t").first?.id)
            #expect(await send(relay, "/ledger", team: "other").body.contains("No fact-checks yet"))
            #expect(await send(relay, "/ledger show \(id)", team: "other").body.contains("There is no fact-check #\(id) in this team"))
            #expect(await send(relay, "/ledger mark \(id) true", team: "other").kind == .error)
            #expect(try await store.ledgerEntry(team: "t", id: id)?.mark == nil)
            let guest = await send(relay, "/ledger", external: true)
            #expect(guest.kind == .error && guest.body.contains("shared with another organisation"))
        }
    }

    @Test func aMarkIsKeptAndShownAndBadMarksSayHowToFixThem() async throws {
        try await withRelay { relay, store in
            _ = await send(relay, "/tribunal The Eiffel Tower is in Berlin")
            let id = try #require(try await store.ledgerEntries(team: "t").first?.id)
            // Marks teach the council: only admins make them.
            let refused = await send(relay, "/ledger mark \(id) TRUE", user: "bob")
            #expect(refused.kind == .error && refused.body.contains("Only this team's admins can mark fact-checks"))
            #expect(try await store.ledgerEntry(team: "t", id: id)?.mark == nil)
            let marked = await send(relay, "/ledger mark \(id) TRUE")
            #expect(marked.body.contains("Marked fact-check #\(id) as true"))
            #expect(try await store.ledgerEntry(team: "t", id: id)?.mark?.user == "ada")
            #expect(await send(relay, "/ledger show \(id)").body.contains("Marked true by ada"))
            #expect(await send(relay, "/ledger").body.contains("marked true"))

            // right / wrong: about the recorded verdict (false here), as a 👍 or 👎 says it.
            #expect(await send(relay, "/ledger mark \(id) right").body.contains("as false"))
            #expect(await send(relay, "/ledger mark \(id) wrong").body.contains("as true"))
            #expect(await send(relay, "/tribunal Another claim").footer?.summary.hasSuffix("fact-check #\(id + 1)") == true)
            #expect(LedgerReference.id(in: "Verdict: false · 75% · 2/3 models · 0.0 s · fact-check #\(id)") == id)
            #expect(LedgerReference.id(in: "no number here") == nil)

            #expect(await send(relay, "/ledger mark \(id) maybe").body.contains("true, false or partly"))
            #expect(await send(relay, "/ledger mark \(id) unverifiable").body.contains("true, false or partly"))
            #expect(await send(relay, "/ledger mark x true").body.contains("Give the fact-check's number"))
            #expect(await send(relay, "/ledger show").body.contains("`/ledger show 12`"))
            #expect(await send(relay, "/ledger mark 999 false").body.contains("There is no fact-check #999"))
        }
    }

    @Test func retentionDecidesWhatIsKept() async throws {
        try await withRelay { relay, store in
            _ = await send(relay, "/settings retention metadata")
            _ = await send(relay, "/tribunal The Eiffel Tower is in Berlin")
            let kept = try #require(try await store.ledgerEntries(team: "t").first)
            #expect(kept.claim == nil && kept.answer == nil && kept.judges.allSatisfy { $0.answer == nil })
            #expect(kept.judges.map(\.verdict) == [.false, .true, nil])
            #expect(await send(relay, "/ledger").body.contains("(text not kept)"))

            _ = await send(relay, "/settings retention off", user: "bob")
            _ = await send(relay, "/tribunal Bob's claim", user: "bob")
            #expect(try await store.ledgerEntries(team: "t").count == 1, "retention off records nothing")
        }
    }

    @Test func historyClearTakesTheFactChecksTheUserAsked() async throws {
        try await withRelay { relay, store in
            _ = await send(relay, "/tribunal Mine")
            _ = await send(relay, "/tribunal Bob's", user: "bob")
            let cleared = await send(relay, "/history clear")
            #expect(cleared.body.contains("1 fact-check you asked"))
            let left = try await store.ledgerEntries(team: "t").map(\.claim)
            #expect(left == ["Bob's"])
        }
    }

    @Test func aChainsVerifyGateIsRecordedWithTheTextItJudged() async throws {
        try await withRelay { relay, store in
            _ = await send(relay, "/chain save check = input > verify:50 > output")
            _ = await send(relay, "/run check The moon is made of cheese")
            let entry = try #require(try await store.ledgerEntries(team: "t").first)
            #expect(entry.origin == .verify)
            #expect(entry.claim == "The moon is made of cheese")
        }
    }

    @Test func exportIsOneJSONObjectPerLineOldestFirst() async throws {
        try await withRelay { relay, _ in
            _ = await send(relay, "/tribunal First claim")
            _ = await send(relay, "/tribunal Second claim")
            let export = await send(relay, "/ledger export")
            #expect(export.title?.contains("JSON Lines · 2 entries") == true)
            let objects = try export.body.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
            #expect(objects.map { $0["claim"] as? String } == ["First claim", "Second claim"])
            #expect(objects.first?["verdict"] as? String == "false")
            #expect((objects.first?["judges"] as? [Any])?.count == 3)
            #expect(await send(relay, "/ledger export now").kind == .error)
        }
    }
}
