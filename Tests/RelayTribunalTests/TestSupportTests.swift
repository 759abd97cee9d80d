import RelayCore
import RelayTestSupport
import Testing

@testable import RelayTribunal

/// The fakes other suites rely on behave as documented.
@Suite("RelayTestSupport fakes")
struct TestSupportTests {
    /// Sends `body` as the client would, but past its own length and range checks.
    func rawError(_ h: TribunalHarness, _ path: String, _ body: some Encodable) async -> TribunalError? {
        await failure { try await h.client.post(path, body: body, timeout: .seconds(10), as: RheaWire.QuickResponse.self) }
    }

    @Test func fakeValidatesBodiesLikePydantic() async throws {
        try await withTribunal(apiKey: FakeRheaTribunal.defaultAPIKey) { h in
            let smallK = RheaWire.TribunalRequest(prompt: "p", k: 1, tier: "cheap", mode: "local")
            #expect(await rawError(h, "/tribunal", smallK) == .rejected(detail: "k: Input should be greater than or equal to 2"))
            let bigK = RheaWire.TribunalRequest(prompt: "p", k: 11, tier: "cheap", mode: "local")
            #expect(await rawError(h, "/tribunal", bigK) == .rejected(detail: "k: Input should be less than or equal to 10"))
            let longPrompt = RheaWire.TribunalRequest(
                prompt: String(repeating: "x", count: 10_001), k: 3, tier: "cheap", mode: "local")
            #expect(
                await rawError(h, "/tribunal", longPrompt)
                    == .rejected(detail: "prompt: String should have at most 10000 characters"))
            let longText = RheaWire.QuickRequest(text: String(repeating: "x", count: 5001), action: "grammar", targetLang: "", style: "", tier: "cheap")
            #expect(
                await rawError(h, "/keyboard/quick", longText)
                    == .rejected(detail: "text: String should have at most 5000 characters"))
            let noText = RheaWire.DialogRequest(text: "", sender: "s")
            #expect(
                await rawError(h, "/dialog", noText) == .rejected(detail: "text: String should have at least 1 character"))
            #expect(await h.fake.requestCount() == 5)
            let recorded = await h.fake.requests(path: "/tribunal").first
            #expect(recorded?["k"] == 1)
        }
    }

    @Test func fakeRequiresCredentialsOnlyForTribunal() async throws {
        try await withTribunal { h in
            let body = RheaWire.TribunalRequest(prompt: "p", k: 3, tier: "cheap", mode: "local")
            #expect(
                await rawError(h, "/tribunal", body)
                    == .unauthorized(detail: "Invalid or missing API key. Sign up at /auth/signup"))
            let dialog = try await h.client.post(
                "/dialog", body: RheaWire.DialogRequest(text: "hi", sender: "x"), timeout: .seconds(10),
                as: RheaWire.DialogResponse.self)
            #expect(dialog.0.reply == "[dialog] hi")
        }
    }

    @Test func fakeRecordsUnknownPathsAndAnswers404() async throws {
        try await withTribunal { h in
            let error = await rawError(h, "/sceptic", RheaWire.DialogRequest(text: "x", sender: "y"))
            guard case .rejected(let detail) = error else {
                Issue.record("expected .rejected, got \(String(describing: error))")
                return
            }
            #expect(detail.contains("404"))
            #expect(await h.fake.requests().map(\.path) == ["/sceptic"])
        }
    }

    @Test func scriptedTribunalIsDeterministicAndRecords() async throws {
        let recorder = ScriptedTribunal.Recorder()
        let tribunal = ScriptedTribunal(
            recorder: recorder,
            agreement: { claim, tier in tier == .cheap && claim.contains("doubt") ? 0.4 : 0.9 },
            verdict: .true,
            failure: { call in
                if case .quick(let request) = call, request.tier == .frontier { return .timedOut(url: "x", after: .seconds(1)) }
                return nil
            })
        let french = try #require(Language.lookup("fr"))
        #expect(try await tribunal.quick(QuickRequest(action: .translate(to: french), text: "Hi")).text == "[translate:fr@cheap] Hi")
        #expect(try await tribunal.quick(QuickRequest(action: .rewrite(style: nil), text: "Hi", tier: .mid)).text == "[rewrite:clearer@mid] Hi")
        #expect(try await tribunal.quick(QuickRequest(action: .summarize, text: "Hi")).text == "[summarize@cheap] Hi")
        #expect(await failure { try await tribunal.quick(QuickRequest(action: .grammar, text: "Hi", tier: .frontier)) } != nil)

        let doubtful = try await tribunal.consensus(ConsensusRequest(claim: "I doubt it", k: 3))
        #expect(doubtful.agreement == 0.4)
        #expect(doubtful.verdict == .true)
        #expect(doubtful.dissent.map(\.model) == ["scripted/model-3"])
        let sure = try await tribunal.consensus(ConsensusRequest(claim: "I doubt it", k: 3, tier: .mid))
        #expect(sure.agreement == 0.9)
        #expect(sure.dissent.isEmpty)

        #expect(await recorder.calls.count == 6)
        #expect(await recorder.consensusRequests.map(\.tier) == [.cheap, .mid])
    }
}
