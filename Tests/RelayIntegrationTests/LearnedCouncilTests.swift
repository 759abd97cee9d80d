import AsyncHTTPClient
import Foundation
import Logging
import RelayCore
import RelayHTTP
import RelayPipeline
import RelayStore
import RelayTestSupport
import RelayTribunal
import Testing

/// Issue 14, points 2 and 3, through the council as `serve` builds it: votes weigh by what the
/// ledger taught of each model, not by the confidence a model states; the footer's number is the
/// probability that the verdict is right, beside the share that agreed; `/council` shows it.
@Suite("The council learns from the ledger whom to trust")
struct LearnedCouncilTests {
    /// Three judges: two careful ones that say "true" at 0.6, and a confident one that says
    /// "false" at 0.99 — the agreement formula sides with neither clearly (55 %).
    func withCouncil(history: [LedgerEntry], _ body: (Relay, any Store) async throws -> Void) async throws {
        let personas: [FakeOpenAIPersona] = [
            .verdict(.true, confidence: 0.6, answer: "Yes, careful."), .verdict(.true, confidence: 0.6, answer: "Yes, also careful."),
            .verdict(.false, confidence: 0.99, answer: "No, certainly not."),
        ]
        var servers: [FakeOpenAIServer] = []
        for persona in personas { servers.append(try await FakeOpenAIServer.start(persona: persona)) }
        let httpClient = HTTPTransport.makeClient()
        let store = MemoryStore()
        for entry in history { _ = try await store.recordConsensus(entry) }
        let names = ["careful-a", "careful-b", "loud"]
        let configuration = CouncilConfiguration(
            models: zip(names, servers).map { CouncilModel(name: $0, baseURL: $1.url, model: $0, tier: .cheap) }, deadline: .seconds(10))
        let council = Council(
            configuration: configuration, client: OpenAICompatibleClient(transport: HTTPTransport(client: httpClient), logger: Logger(label: "test")),
            logger: Logger(label: "test"),
            reliability: CouncilReliability(weights: [:], history: { try await store.recentLedger(limit: CouncilReliability.historyLimit) }))
        do {
            try await body(Relay(tribunal: council, store: store), store)
        } catch {
            for server in servers { await server.stop() }
            try? await httpClient.shutdown()
            throw error
        }
        for server in servers { await server.stop() }
        try await httpClient.shutdown()
    }

    /// A history in which "loud" always contradicts the two careful judges, who agree.
    static func history(_ count: Int) -> [LedgerEntry] {
        (0..<count).map { index in
            let truth: Verdict = index.isMultiple(of: 2) ? .true : .false
            let opposite: Verdict = truth == .true ? .false : .true
            return LedgerEntry(
                team: "t", user: "u", channel: "c", origin: .tribunal, claim: "claim \(index)", answer: nil, verdict: truth, score: 0.5,
                answered: 3, asked: 3,
                judges: [
                    LedgerJudge(model: "careful-a", verdict: truth, confidence: 0.6), LedgerJudge(model: "careful-b", verdict: truth, confidence: 0.6),
                    LedgerJudge(model: "loud", verdict: opposite, confidence: 0.99),
                ],
                backend: "council", createdAt: Date(timeIntervalSince1970: 1_750_000_000 + Double(index)))
        }
    }

    func send(_ relay: Relay, _ text: String) async -> Reply {
        await relay.handle(Event(platform: "test", team: "t", channel: "c", user: "ada", text: text)) ?? .error("duplicate")
    }

    @Test func aConfidentJudgeThatHistoryContradictsDoesNotCarryTheVerdict() async throws {
        try await withCouncil(history: Self.history(60)) { relay, _ in
            let reply = await send(relay, "/tribunal --k 3 The claim")
            let footer = try #require(reply.footer)
            #expect(footer.verdict == .true)
            #expect(footer.scoreMeaning == .probabilityRight)
            #expect(footer.percent >= 90, "two judges with a good record outweigh one with a bad one: \(footer.summary)")
            #expect(footer.summary.contains("likely right · 2 of 3 agree · 3/3 models"))
            #expect(footer.dissent.map(\.model) == ["loud"])

            let council = await send(relay, "/council")
            #expect(council.title == "The council", "\(council.body)")
            let lines = council.body.split(separator: "\n").map(String.init)
            let loud = try #require(lines.first { $0.hasPrefix("• loud") })
            let careful = try #require(lines.first { $0.hasPrefix("• careful-a") })
            #expect(loud.contains("61 verdicts") && careful.contains("61 verdicts"), "the history and the /tribunal just asked")
            #expect(Self.accuracy(in: loud) < 30 && Self.accuracy(in: careful) > 80, "\(loud)\n\(careful)")
            #expect(council.body.contains("Learned from 61 fact-checks (0 marked by people)"), "the /tribunal just asked is in the ledger too")
        }
    }

    @Test func withoutHistoryEveryJudgeStartsFromThePriorAndConfidenceCountsForNothing() async throws {
        try await withCouncil(history: []) { relay, _ in
            #expect(await send(relay, "/council").body.contains("• loud (cheap): accuracy 70% · no verdicts yet: its prior"))
            #expect(await send(relay, "/help tribunal").body.contains("the probability that the verdict is right"))
            let reply = await send(relay, "/tribunal --k 3 The claim")
            let footer = try #require(reply.footer)
            // Equal priors: two votes beat one, whatever the one says of its own certainty.
            #expect(footer.verdict == .true)
            #expect(footer.scoreMeaning == .probabilityRight)
        }
    }

    @Test func peoplesMarksTeachTheCouncilToo() async throws {
        // Ten marked claims in which only "loud" was right: the marks outweigh the majority.
        var history = Self.history(10)
        for index in history.indices {
            history[index].mark = LedgerMark(verdict: history[index].judges[2].verdict!, user: "editor", markedAt: Date(timeIntervalSince1970: 1_750_000_100))
        }
        try await withCouncil(history: history) { relay, _ in
            let council = await send(relay, "/council").body
            let loud = try #require(council.split(separator: "\n").first { $0.hasPrefix("• loud") }).description
            #expect(Self.accuracy(in: loud) > 70, "\(loud)")
            #expect(council.contains("10 marked by people"))
            #expect(council.contains("rescaled to match 10 fact-checks people marked"))
            #expect(await send(relay, "/tribunal --k 3 The claim").footer?.verdict == .false)
        }
    }

    static func accuracy(in line: String) -> Int {
        guard let range = line.range(of: #"accuracy (\d+)%"#, options: .regularExpression) else { return -1 }
        return Int(line[range].dropFirst("accuracy ".count).dropLast()) ?? -1
    }
}
