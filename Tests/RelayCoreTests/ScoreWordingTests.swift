import RelayCore
import RelayTestSupport
import Testing

/// One wording for a consensus's score (issue 46, point 5): the probability that the verdict is
/// right and the share that agrees are never called one another, and no verdict reads "No
/// verdict" in the reply, `/history`, the ledger, a chain's stop and `/help tribunal` alike.
@Suite("A score worded one way everywhere")
struct ScoreWordingTests {
    /// The council that learns from its ledger: its score is a probability of being right.
    static func learned(verdict: Verdict?, score: Double) -> ScriptedTribunal {
        ScriptedTribunal(agreement: { _, _ in score }, verdict: verdict, scoreMeaning: .probabilityRight)
    }

    @Test func aProbabilityIsCalledOneEverywhere() async throws {
        try await RelayHarness.with(tribunal: Self.learned(verdict: .true, score: 0.75)) { relay in
            let reply = await relay.send("/tribunal The sky is blue")
            #expect(reply.footer?.summary.contains("Verdict: true · 75% likely right") == true, "\(reply.footer?.summary ?? "")")
            let history = await relay.send("/history")
            #expect(history.body.contains("tribunal · ok · 75% likely right · 3/3 models"), "\(history.body)")
            let ledger = await relay.send("/ledger")
            #expect(ledger.body.contains("true · 75% likely right · 3/3 models"), "\(ledger.body)")

            await relay.send("/chain save check = grammar > verify:80")
            let stopped = await relay.send("/run check teh sky")
            #expect(stopped.body.contains("75% likely right is below 80%"), "\(stopped.body)")
            for text in [reply.footer?.summary ?? "", history.body, ledger.body, stopped.body] {
                #expect(!text.lowercased().contains("agreement 75%"), "a probability called agreement: \(text)")
            }
        }
    }

    @Test func noVerdictReadsTheSameEverywhere() async throws {
        try await RelayHarness.with(tribunal: Self.learned(verdict: nil, score: 0)) { relay in
            let reply = await relay.send("/tribunal The sky is blue")
            #expect(reply.footer?.summary.hasPrefix("No verdict · 3/3 models") == true, "\(reply.footer?.summary ?? "")")
            let history = await relay.send("/history")
            #expect(history.body.contains("tribunal · ok · No verdict · 3/3 models"), "\(history.body)")
            let ledger = await relay.send("/ledger")
            #expect(ledger.body.contains("· no verdict · 3/3 models"), "\(ledger.body)")
            await relay.send("/chain save check = grammar > verify:80")
            let stopped = await relay.send("/run check teh sky")
            #expect(stopped.body.contains("no model gave a verdict"), "\(stopped.body)")
            for text in [reply.footer?.summary ?? "", history.body, ledger.body, stopped.body] {
                #expect(!text.contains("0%"), "no figure where there is no verdict: \(text)")
            }
            let help = await relay.send("/help tribunal")
            #expect(help.body.contains("\"No verdict\", with no figure"), "\(help.body)")
            #expect(!help.body.contains("no readable verdict reads about 50%"), "\(help.body)")
        }
    }
}
