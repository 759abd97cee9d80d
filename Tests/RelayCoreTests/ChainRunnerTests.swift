import Foundation
import RelayCore
import RelayTestSupport
import Synchronization
import Testing

@Suite("Chain runner")
struct ChainRunnerTests {
    func run(
        _ source: String, input: String? = "hello", thread: String? = nil, tribunal: ScriptedTribunal = ScriptedTribunal(),
        limits: ChainLimits = ChainLimits(), customs: [String: CustomCommand] = [:]
    ) async throws -> (ChainOutcome, [RunProgress]) {
        let chain = try ChainParser(limits: limits, customCommands: Set(customs.keys)).parse(source)
        let seen = Mutex<[RunProgress]>([])
        let context = RunContext(
            input: input, thread: thread, tier: .cheap, k: 3, language: Language(code: "de", name: "German"), customCommands: customs, userName: "ada")
        let outcome = await ChainRunner(tribunal: tribunal, limits: limits).run(chain, context: context) { progress in
            seen.withLock { $0.append(progress) }
        }
        return (outcome, seen.withLock { $0 })
    }

    @Test func actionsRunInOrderAndModelCarriesItsTierForward() async throws {
        let tribunal = ScriptedTribunal()
        let (outcome, progress) = try await run("input > grammar > model:mid \"Polish: {input}\" > rewrite:formal > translate > output", tribunal: tribunal)
        #expect(outcome.status == .completed)
        #expect(outcome.text == "[translate:de@mid] [rewrite:formal@mid] [freeform@mid] Polish: [grammar@cheap] hello")
        let requests = await tribunal.recorder.quickRequests
        #expect(requests.map(\.tier) == [.cheap, .mid, .mid, .mid])
        #expect(requests.map(\.action) == [.grammar, .freeform, .rewrite(style: .formal), .translate(to: Language(code: "de", name: "German"))])
        #expect(
            progress.map(\.line) == [
                "Running… 1/6 (input)", "Running… 2/6 (grammar)", "Running… 3/6 (model:mid)",
                "Running… 4/6 (rewrite:formal)", "Running… 5/6 (translate)", "Running… 6/6 (output)",
            ])
        #expect(outcome.modelCalls == 4)
        // A chain's prompt is its team's: neither progress nor the notes under the result show it.
        #expect(!outcome.log.joined().contains("Polish"))
    }

    @Test func everyActionBlockMapsToItsAction() async throws {
        let tribunal = ScriptedTribunal()
        let (outcome, _) = try await run("summarize > extract > explain > rewrite > translate:ja", tribunal: tribunal)
        #expect(outcome.status == .completed)
        #expect(
            await tribunal.recorder.quickRequests.map(\.action) == [
                .summarize, .extract, .explain, .rewrite(style: nil), .translate(to: Language(code: "ja", name: "Japanese")),
            ])
    }

    @Test func customCommandBlocksFillTheirTemplate() async throws {
        let eli5 = CustomCommand(team: "t", name: "eli5", template: "Explain to {user} in {lang}: {input}", creator: "ada", createdAt: .now)
        let tribunal = ScriptedTribunal()
        let (outcome, _) = try await run("eli5", tribunal: tribunal, customs: ["eli5": eli5])
        #expect(outcome.text == "[freeform@cheap] Explain to ada in German: hello")
    }

    @Test func verifyPassesAtOrAboveTheThreshold() async throws {
        let tribunal = ScriptedTribunal(agreement: { _, _ in 0.8 })
        let (outcome, _) = try await run("grammar > verify:80 > output", tribunal: tribunal)
        #expect(outcome.status == .completed)
        #expect(outcome.lastVerification?.agreement == 0.8)
        let claims = await tribunal.recorder.consensusRequests
        #expect(claims.count == 1)
        #expect(claims[0].claim.hasSuffix("[grammar@cheap] hello"))
        #expect(claims[0].k == 3)
    }

    @Test func verifyStopsBelowTheThresholdAndLaterBlocksDoNotRun() async throws {
        let tribunal = ScriptedTribunal(agreement: { _, _ in 0.5 })
        let (outcome, progress) = try await run("grammar > verify:80 > translate:fr", tribunal: tribunal)
        guard case .stopped(let why) = outcome.status else {
            Issue.record("expected a stop, got \(outcome.status)")
            return
        }
        #expect(why.contains("block 2"))
        #expect(why.contains("agreement 50% is below 80%"))
        #expect(why.contains("add `escalate`"))
        #expect(await tribunal.recorder.quickRequests.count == 1)
        #expect(progress.count == 1)
    }

    @Test func verifyFailsOnANonAffirmativeVerdictEvenWithHighAgreement() async throws {
        let tribunal = ScriptedTribunal(agreement: { _, _ in 0.95 }, verdict: .false)
        let (outcome, _) = try await run("grammar > verify:80", tribunal: tribunal)
        guard case .stopped(let why) = outcome.status else {
            Issue.record("expected a stop")
            return
        }
        #expect(why.contains("the verdict is false"))
    }

    @Test func escalateRerunsThePreviousStepOneTierHigher() async throws {
        let tribunal = ScriptedTribunal(agreement: { _, tier in tier == .cheap ? 0.5 : 0.9 })
        let (outcome, _) = try await run("grammar > verify:80 escalate > output", tribunal: tribunal)
        #expect(outcome.status == .completed)
        #expect(outcome.text == "[grammar@mid] hello")
        #expect(await tribunal.recorder.quickRequests.map(\.tier) == [.cheap, .mid])
        #expect(await tribunal.recorder.consensusRequests.map(\.tier) == [.cheap, .mid])
        #expect(outcome.modelCalls == 8)
    }

    @Test func escalateStopsAtTheTopTier() async throws {
        let tribunal = ScriptedTribunal(agreement: { _, _ in 0.4 })
        let (outcome, _) = try await run("grammar > verify:70 escalate", tribunal: tribunal)
        guard case .stopped(let why) = outcome.status else {
            Issue.record("expected a stop")
            return
        }
        #expect(why.contains("even at the top tier"))
        #expect(await tribunal.recorder.consensusRequests.map(\.tier) == [.cheap, .mid, .frontier])
        #expect(await tribunal.recorder.quickRequests.map(\.tier) == [.cheap, .mid, .frontier])
    }

    // MARK: Escalation to another model, and self-checks

    /// A roster of named models: `own` models of the tier (or, when empty, borrowed `others`).
    static func roster(_ own: [String], borrowed others: [String] = [], judges: [String]? = nil, sameEndpoint: Bool = false) -> TierRoster {
        let model = { (name: String) in TierRoster.Model(name: name, endpoint: sameEndpoint ? "http://127.0.0.1:18082/v1 smollm2" : "endpoint of \(name)") }
        let writers = own.isEmpty ? others : own
        return TierRoster(hasOwnModels: !own.isEmpty, writers: writers.map(model), judges: (judges ?? writers).map(model))
    }

    /// The local model of a first run: one model at cheap, which the other tiers borrow.
    static let onlyLocal: [Tier: TierRoster] = [
        .cheap: roster(["local"]), .mid: roster([], borrowed: ["local"]), .frontier: roster([], borrowed: ["local"]),
    ]

    @Test func escalateRerunsAModelBlockAtTheHigherTierThoughTheBlockNamesItsOwn() async throws {
        let tribunal = ScriptedTribunal(agreement: { _, tier in tier == .cheap ? 0.5 : 0.9 })
        let (outcome, _) = try await run("model:cheap \"Answer briefly: {input}\" > verify:80 escalate", tribunal: tribunal)
        #expect(outcome.status == .completed)
        #expect(await tribunal.recorder.quickRequests.map(\.tier) == [.cheap, .mid])
        #expect(outcome.text == "[freeform@mid] Answer briefly: hello")
    }

    @Test func escalateSkipsATierThatOnlyBorrowsItsNeighboursModels() async throws {
        let rosters: [Tier: TierRoster] = [.cheap: Self.roster(["mini"]), .mid: Self.roster([], borrowed: ["mini", "big"]), .frontier: Self.roster(["big"])]
        let tribunal = ScriptedTribunal(agreement: { _, tier in tier == .frontier ? 0.9 : 0.5 }, rosters: rosters)
        let (outcome, _) = try await run("grammar > verify:80 escalate > output", tribunal: tribunal)
        #expect(outcome.status == .completed)
        #expect(await tribunal.recorder.quickRequests.map(\.tier) == [.cheap, .frontier])
        #expect(outcome.log.contains { $0.contains("escalating to frontier") })
    }

    @Test func escalateWithOnlyOneModelStopsAtOnceAndSaysItWasASelfCheck() async throws {
        let tribunal = ScriptedTribunal(agreement: { _, _ in 0.73 }, rosters: Self.onlyLocal)
        let (outcome, _) = try await run("model:cheap \"Answer briefly: {input}\" > verify:80 escalate", tribunal: tribunal)
        guard case .stopped(let why) = outcome.status else {
            Issue.record("expected a stop, got \(outcome.status)")
            return
        }
        #expect(why.contains("agreement 73% is below 80% in a self-check"))
        #expect(why.contains("no tier above cheap has a model other than `local` to retry with"))
        // One step: the one model was asked once to write and once to judge, never again.
        #expect(await tribunal.recorder.quickRequests.count == 1)
        #expect(await tribunal.recorder.consensusRequests.count == 1)
        #expect(outcome.log.contains { $0.contains("a self-check: local judged its own text") })
    }

    @Test func theSameModelUnderAnotherNameIsNoEscalation() async throws {
        let rosters: [Tier: TierRoster] = [
            .cheap: Self.roster(["small"], sameEndpoint: true), .mid: Self.roster(["medium"], sameEndpoint: true),
            .frontier: Self.roster(["large"], sameEndpoint: true),
        ]
        let tribunal = ScriptedTribunal(agreement: { _, _ in 0.5 }, rosters: rosters)
        let (outcome, _) = try await run("grammar > verify:80 escalate", tribunal: tribunal)
        guard case .stopped(let why) = outcome.status else {
            Issue.record("expected a stop, got \(outcome.status)")
            return
        }
        #expect(why.contains("no tier above cheap has a model other than `small`"))
        #expect(await tribunal.recorder.quickRequests.count == 1)
    }

    @Test func aPassingSelfCheckSaysSoAndOtherJudgesAreNone() async throws {
        let alone = ScriptedTribunal(agreement: { _, _ in 0.9 }, rosters: Self.onlyLocal)
        let (checked, _) = try await run("grammar > verify:80 > output", tribunal: alone)
        #expect(checked.status == .completed)
        #expect(checked.log.contains("2. verify:80 passed (agreement 90%) · cheap · a self-check: local judged its own text"))

        let panel = ScriptedTribunal(agreement: { _, _ in 0.9 }, rosters: [.cheap: Self.roster(["mini"], judges: ["mini", "other", "third"])])
        let (judged, _) = try await run("grammar > verify:80 > output", tribunal: panel)
        #expect(judged.log.contains("2. verify:80 passed (agreement 90%) · cheap"))
    }

    @Test func loopRunsThePreviousBlockThatManyTimesInTotal() async throws {
        let tribunal = ScriptedTribunal()
        let (outcome, _) = try await run("rewrite:shorter > loop:3", tribunal: tribunal)
        #expect(outcome.text == "[rewrite:shorter@cheap] [rewrite:shorter@cheap] [rewrite:shorter@cheap] hello")
        #expect(outcome.modelCalls == 3)
    }

    @Test func theModelCallLimitStopsARunThatEscalatesTooFar() async throws {
        let tribunal = ScriptedTribunal(agreement: { _, _ in 0.1 })
        let (outcome, _) = try await run("grammar > verify:80 escalate", tribunal: tribunal, limits: ChainLimits(maxModelCalls: 10))
        guard case .stopped(let why) = outcome.status else {
            Issue.record("expected a stop")
            return
        }
        #expect(why.contains("exceed 10 model calls"))
        #expect(outcome.modelCalls <= 10)
    }

    @Test func inputThreadUsesTheThreadAndSaysWhenThereIsNone() async throws {
        let (outcome, _) = try await run("input:thread > summarize", input: nil, thread: "a\nb")
        #expect(outcome.text == "[summarize@cheap] a\nb")
        let (missing, _) = try await run("input:thread > summarize", input: nil, thread: nil)
        guard case .stopped(let why) = missing.status else {
            Issue.record("expected a stop")
            return
        }
        #expect(why.contains("needs a thread"))
    }

    @Test func outputPrivateMarksTheResultPrivate() async throws {
        let (outcome, _) = try await run("grammar > output:private")
        #expect(outcome.isPrivate)
    }

    @Test func aBackendFailureEndsTheRunWithItsError() async throws {
        let tribunal = ScriptedTribunal(failure: { call in
            if case .quick(let request) = call, request.action == .explain { return .timedOut(url: "http://x", after: .seconds(15)) }
            return nil
        })
        let (outcome, _) = try await run("grammar > explain > summarize", tribunal: tribunal)
        #expect(outcome.status == .failed(.timedOut(url: "http://x", after: .seconds(15))))
        #expect(outcome.text == "[grammar@cheap] hello")
        #expect(await tribunal.recorder.quickRequests.count == 2)
    }
}

/// A chain's answer as it is written: only its last text block streams, and only when nothing
/// after it judges or redoes its text.
@Suite("Chain runner: the last block as it is written")
struct ChainRunnerWritingTests {
    /// Writes each answer in two halves before returning it whole.
    struct WritingTribunal: Tribunal {
        let base = ScriptedTribunal()
        func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult { try await base.quick(request) }
        func quick(_ request: QuickRequest, streaming onText: @escaping PartialText) async throws(TribunalError) -> QuickResult {
            let result = try await base.quick(request)
            await onText(String(result.text.prefix(result.text.count / 2)))
            await onText(result.text)
            return result
        }
        func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult { try await base.consensus(request) }
        func health() async throws(TribunalError) -> BackendHealth { try await base.health() }
    }

    func progress(of source: String) async throws -> (ChainOutcome, [RunProgress]) {
        let chain = try ChainParser(limits: ChainLimits(), customCommands: []).parse(source)
        let seen = Mutex<[RunProgress]>([])
        let context = RunContext(
            input: "hello", thread: nil, tier: .cheap, k: 3, language: Language(code: "de", name: "German"), customCommands: [:], userName: "ada")
        let outcome = await ChainRunner(tribunal: WritingTribunal()).run(chain, context: context, writingTitle: "Chain polish") { step in
            seen.withLock { $0.append(step) }
        }
        return (outcome, seen.withLock { $0 })
    }

    @Test func theLastTextBlockIsShownAsItIsWrittenAndNothingCoversIt() async throws {
        let (outcome, progress) = try await progress(of: "input > grammar > rewrite:formal > output")
        #expect(outcome.status == .completed)
        #expect(progress.prefix(2).map(\.line) == ["Running… 1/4 (input)", "Running… 2/4 (grammar)"])
        let writing = progress.dropFirst(2)
        #expect(writing.count == 2, "\(progress)")
        #expect(writing.allSatisfy { $0.partial?.title == "Chain polish" })
        #expect(writing.last?.partial?.text == outcome.text)
    }

    @Test func aTextAVerifyOrALoopComesAfterIsNotShownBeforeItIsJudged() async throws {
        for source in ["input > grammar > verify:80 > output", "input > grammar > loop:2 > output"] {
            let chain = try ChainParser(limits: ChainLimits(), customCommands: []).parse(source)
            #expect(ChainRunner.lastWritingBlock(chain) == nil, "\(source)")
        }
        let (_, progress) = try await progress(of: "input > grammar > verify:80 > output")
        #expect(progress.allSatisfy { $0.partial == nil }, "\(progress)")
    }
}
