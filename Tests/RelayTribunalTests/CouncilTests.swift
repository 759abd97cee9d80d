import Foundation
import RelayCore
import RelayTestSupport
import RelayTribunal
import Testing

@Suite("Council over fake OpenAI-compatible servers")
struct CouncilTests {
    typealias Member = CouncilHarness.Member

    @Test func agreeingModelsGiveFullAgreement() async throws {
        try await CouncilHarness.with([
            Member(name: "a", tier: .cheap, persona: .agree), Member(name: "b", tier: .cheap, persona: .agree),
            Member(name: "c", tier: .cheap, persona: .agree),
        ]) { h in
            let result = try await h.council.consensus(ConsensusRequest(claim: "Water is wet", k: 3, tier: .cheap))
            #expect(result.verdict == .true)
            #expect(result.agreement == 1)
            #expect(result.answered == 3 && result.asked == 3)
            #expect(result.dissent.isEmpty)
            #expect(result.answer.hasPrefix("Yes."))
            #expect(result.scoreMeaning == .agreement)
            // Each judge got the claim and the JSON instructions.
            let body = h.servers["a"]!.lastRequest()?.rawBody ?? ""
            #expect(body.contains("Water is wet") && body.contains("verdict"))
        }
    }

    @Test func aDissenterIsNamedWithItsReason() async throws {
        try await CouncilHarness.with([
            Member(name: "a", tier: .cheap, persona: .agree), Member(name: "b", tier: .cheap, persona: .agree),
            Member(name: "c", tier: .cheap, persona: .disagree),
        ]) { h in
            let result = try await h.council.consensus(ConsensusRequest(claim: "The Eiffel Tower is in Paris", k: 3, tier: .cheap))
            #expect(result.verdict == .true)
            #expect(abs(result.agreement - 1.8 / 2.6) < 1e-9)
            #expect(result.dissent.map(\.model) == ["c"])
            #expect(result.dissent.first?.verdict == .false)
            #expect(result.dissent.first?.reason.hasPrefix("No.") == true)
        }
    }

    @Test func proseAndMalformedAnswersCountAsAnsweredButReadDifferently() async throws {
        try await CouncilHarness.with([
            Member(name: "a", tier: .cheap, persona: .jsonInProse(.true, confidence: 0.9)),
            Member(name: "b", tier: .cheap, persona: .prose("I think that is correct, it is true.")),
            Member(name: "c", tier: .cheap, persona: .malformedJSON),
        ]) { h in
            let result = try await h.council.consensus(ConsensusRequest(claim: "x", k: 3, tier: .cheap))
            #expect(result.answered == 3)
            #expect(result.verdict == .true)
            // a: 0.9, b: keyword verdict with default 0.5, c: keyword "true" in the broken JSON, 0.5.
            #expect(abs(result.agreement - 1) < 1e-9)
        }
        try await CouncilHarness.with([
            Member(name: "a", tier: .cheap, persona: .agree), Member(name: "b", tier: .cheap, persona: .prose("Bananas are yellow.")),
        ]) { h in
            let result = try await h.council.consensus(ConsensusRequest(claim: "x", k: 2, tier: .cheap))
            #expect(result.answered == 2)
            #expect(abs(result.agreement - 0.9 / 1.4) < 1e-9)  // the verdict-less answer only dilutes
        }
    }

    @Test func failingModelsDoNotFailTheCouncilWhileAQuorumAnswers() async throws {
        try await CouncilHarness.with([
            Member(name: "a", tier: .cheap, persona: .agree), Member(name: "b", tier: .cheap, persona: .fail(status: 500, message: "boom")),
            Member(name: "c", tier: .cheap, persona: .agree),
        ]) { h in
            let result = try await h.council.consensus(ConsensusRequest(claim: "x", k: 3, tier: .cheap))
            #expect(result.answered == 2 && result.asked == 3)
            #expect(AgreementFooter(result).summary.contains("2 of 3 answered"))
        }
    }

    @Test func belowTheQuorumTheErrorSaysWhoFailedAndWhy() async throws {
        try await CouncilHarness.with(
            [
                Member(name: "a", tier: .cheap, persona: .agree),
                Member(name: "b", tier: .cheap, persona: .fail(status: 401, message: "Incorrect API key provided")),
                Member(name: "c", tier: .cheap, persona: .malformedBody),
            ], quorum: 2
        ) { h in
            do throws(TribunalError) {
                _ = try await h.council.consensus(ConsensusRequest(claim: "x", k: 3, tier: .cheap))
                Issue.record("expected a failure")
            } catch {
                guard case .providerFailed(let detail) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(detail.contains("only 1 of 3 models answered, fewer than the quorum of 2"))
                #expect(detail.contains("b: "))
                #expect(detail.contains("c: "))
            }
        }
    }

    @Test func pastTheDeadlineTheCouncilAnswersWithWhoeverReplied() async throws {
        try await CouncilHarness.with(
            [
                Member(name: "a", tier: .cheap, persona: .agree), Member(name: "b", tier: .cheap, persona: .agree),
                Member(name: "c", tier: .cheap, persona: .hang),
            ], deadline: .seconds(10)
        ) { h in
            // Generous margins: the suite runs in parallel on small machines. Under the 30 s a
            // model may take, so only the deadline explains the answer.
            let started = Date()
            let result = try await h.council.consensus(ConsensusRequest(claim: "x", k: 3, tier: .cheap))
            #expect(Date().timeIntervalSince(started) < 25)
            #expect(result.answered == 2 && result.asked == 3)
            #expect(result.agreement == 1)
        }
    }

    @Test func theDeadlineFollowsTheInjectedClock() async throws {
        let clock = ManualClock()
        let logs = LogCapture()
        try await CouncilHarness.with(
            [
                Member(name: "a", tier: .cheap, persona: .agree), Member(name: "b", tier: .cheap, persona: .agree),
                // Its own time limit is the deadline's length, on real time: two minutes.
                Member(name: "c", tier: .cheap, persona: .hang, timeout: .seconds(600)),
            ], deadline: .seconds(120), clock: clock, logger: logs.logger
        ) { h in
            let started = ContinuousClock.now
            let consensus = Task { try await h.council.consensus(ConsensusRequest(claim: "x", k: 3, tier: .cheap)) }
            try await eventually("the council's deadline on the test clock") { clock.sleeperCount == 1 }
            try await eventually("a's and b's votes counted") { logs.text.components(separatedBy: "council vote counted").count - 1 == 2 }
            clock.advance(by: .seconds(121))
            let result = try await consensus.value
            // Cut off when the test clock passed the deadline, long before two minutes of real time.
            #expect(started.duration(to: .now) < .seconds(60))
            #expect(result.answered == 2 && result.asked == 3)
            #expect(result.judges.map(\.model) == ["a", "b", "c"])
            #expect(result.judges.map(\.error) == [nil, nil, "no answer before the deadline"])
            #expect(result.verdict == .true && result.agreement == 1)
        }
    }

    @Test func aSlowModelWithinTheDeadlineIsWaitedFor() async throws {
        try await CouncilHarness.with(
            [
                Member(name: "a", tier: .cheap, persona: .agree), Member(name: "b", tier: .cheap, persona: .slow(seconds: 0.3, then: .disagree)),
                // The deadline runs on a test clock that never moves: a busy CI machine cannot cut b off.
            ], deadline: .seconds(60), clock: ManualClock()
        ) { h in
            let result = try await h.council.consensus(ConsensusRequest(claim: "x", k: 2, tier: .cheap))
            #expect(result.answered == 2)
            #expect(result.dissent.map(\.model) == ["b"])
        }
    }

    @Test func kModelsOfTheTierAreAskedFilledFromTheNearestTier() async throws {
        try await CouncilHarness.with([
            Member(name: "c1", tier: .cheap, persona: .agree), Member(name: "m1", tier: .mid, persona: .agree),
            Member(name: "m2", tier: .mid, persona: .agree), Member(name: "f1", tier: .frontier, persona: .agree),
        ]) { h in
            let result = try await h.council.consensus(ConsensusRequest(claim: "x", k: 3, tier: .mid))
            #expect(Set(result.models) == ["m1", "m2", "c1"])
            #expect(h.servers["f1"]!.requestCount() == 0)
        }
    }

    @Test func theChairmanWritesTheAnswerAndItsFailureFallsBack() async throws {
        try await CouncilHarness.with(
            [
                Member(name: "a", tier: .cheap, persona: .agree),
                Member(name: "b", tier: .cheap, persona: .verdict(.true, confidence: 0.95, answer: "Most sure.")),
                Member(name: "chair", tier: .frontier, persona: .echo),
            ], chairman: "chair"
        ) { h in
            let result = try await h.council.consensus(ConsensusRequest(claim: "x", k: 2, tier: .cheap))
            #expect(result.answer.hasPrefix("[fake-chair]"))
            #expect(result.answer.contains("Panel verdict: true"))
            h.servers["chair"]!.setPersona(.fail(status: 503, message: "overloaded"))
            let fallback = try await h.council.consensus(ConsensusRequest(claim: "x", k: 2, tier: .cheap))
            #expect(fallback.answer == "Most sure.")
        }
    }

    @Test func quickTriesTheNextModelOfTheTierAndNamesWhoAnswered() async throws {
        try await CouncilHarness.with([
            Member(name: "broken", tier: .cheap, persona: .fail(status: 500, message: "down")), Member(name: "spare", tier: .cheap, persona: .echo),
            Member(name: "big", tier: .frontier, persona: .echo),
        ]) { h in
            let result = try await h.council.quick(
                QuickRequest(action: .translate(to: Language(code: "fr", name: "French")), text: "Good morning", tier: .cheap))
            #expect(result.model == "spare")
            #expect(result.text == "[fake-spare] Good morning")
            let body = h.servers["spare"]!.lastRequest()?.rawBody ?? ""
            #expect(body.contains("into French"))
            #expect(h.servers["big"]!.requestCount() == 0)
            let frontier = try await h.council.quick(QuickRequest(action: .grammar, text: "teh", tier: .frontier))
            #expect(frontier.model == "big")
        }
    }

    @Test func quickFailsWithEveryModelsReasonWhenTheTierIsDown() async throws {
        try await CouncilHarness.with([
            Member(name: "a", tier: .cheap, persona: .fail(status: 500, message: "down")),
            Member(name: "b", tier: .cheap, persona: .fail(status: 429, message: "slow down")),
        ]) { h in
            do throws(TribunalError) {
                _ = try await h.council.quick(QuickRequest(action: .grammar, text: "teh", tier: .cheap))
                Issue.record("expected a failure")
            } catch {
                guard case .providerFailed(let detail) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(detail.contains("all 2 models failed"))
                #expect(detail.contains("a: ") && detail.contains("b: "))
            }
        }
    }
}
