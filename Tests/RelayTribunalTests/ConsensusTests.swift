import RelayCore
import RelayTestSupport
import RelayTribunal
import Testing

@Suite("consensus → POST /tribunal (with credentials) or POST /dialog (without)")
struct ConsensusTests {
    static let token = FakeRheaTribunal.defaultToken

    @Test(arguments: [(Tier.cheap, "cheap"), (.mid, "balanced"), (.frontier, "expensive")])
    func tiersMapToTheBridgeNames(tier: Tier, wire: String) async throws {
        try await withTribunal(token: Self.token) { h in
            _ = try await h.client.consensus(ConsensusRequest(claim: "Water boils at 100 °C at sea level", k: 3, tier: tier))
            let sent = try #require(await h.fake.lastRequest(path: FakeRheaTribunal.tribunalPath))
            #expect(sent["tier"]?.stringValue == wire)
            #expect(sent["mode"] == "local")
            #expect(sent["k"] == 3)
            #expect(sent["prompt"] == "Water boils at 100 °C at sea level")
            #expect(await h.fake.requestCount(path: FakeRheaTribunal.dialogPath) == 0)
        }
    }

    @Test(arguments: [(1, 2), (2, 2), (7, 7), (10, 10), (15, 10), (-3, 2)])
    func kIsClampedToTwoThroughTen(requested: Int, sent: Int) async throws {
        try await withTribunal(token: Self.token) { h in
            let result = try await h.client.consensus(ConsensusRequest(claim: "claim", k: requested))
            #expect(await h.fake.lastRequest(path: FakeRheaTribunal.tribunalPath)?["k"]?.intValue == sent)
            #expect(result.asked == sent)
        }
    }

    @Test func agreeingModelsGiveScoresAndNoDissent() async throws {
        try await withTribunal(token: Self.token) { h in
            let result = try await h.client.consensus(ConsensusRequest(claim: "Exercise is good for the heart", k: 3))
            #expect(result.agreement == 0.82)
            #expect(result.scoreMeaning == .agreement)
            // Every answering model's stance is affirmative: the verdict is true.
            #expect(result.verdict == .true)
            #expect(result.answered == 3)
            #expect(result.asked == 3)
            #expect(result.models == ["openai/fake-a", "deepseek/fake-b", "gemini/fake-c"])
            #expect(result.dissent.isEmpty)
            #expect(result.answer.hasPrefix("Strong consensus across 3 models (agreement: 82%)."))
            #expect(result.elapsed == .milliseconds(50))
            // 0.3·min(3/5, 1) + 0.4·0.82 + 0.3·1
            let confidence = try #require(result.confidence)
            #expect(abs(confidence - 0.808) < 0.0001)
        }
    }

    /// Issue 13, point 4: the gateway gives no verdict; its models' stances imply one.
    @Test func theVerdictComesFromTheModelsStances() async throws {
        try await withTribunal(token: Self.token) { h in
            await h.fake.setStance("negative")
            let rejected = try await h.client.consensus(ConsensusRequest(claim: "The moon is made of cheese", k: 3))
            #expect(rejected.verdict == .false)
            #expect(rejected.agreement == 0.82)
            #expect(rejected.judges.map(\.verdict) == [.false, .false, .false])
            #expect(rejected.judges.map(\.model) == ["openai/fake-a", "deepseek/fake-b", "gemini/fake-c"])

            // Two models: one negative, one qualified — split, so "partly", never a pass.
            await h.fake.setAgreement(0.45, forTier: .cheap)
            let split = try await h.client.consensus(ConsensusRequest(claim: "The moon is made of cheese", k: 2))
            #expect(split.verdict == .partly)

            // A stance that implies nothing leaves the verdict unknown, as before.
            await h.fake.setStance("neutral")
            await h.fake.setAgreement(0.9, forTier: .cheap)
            #expect(try await h.client.consensus(ConsensusRequest(claim: "The moon is made of cheese", k: 3)).verdict == nil)
        }
    }

    @Test func lowAgreementNamesTheDissenterWithTheDivergenceLine() async throws {
        try await withTribunal(token: Self.token) { h in
            await h.fake.setAgreement(0.45, forTier: .mid)
            let result = try await h.client.consensus(ConsensusRequest(claim: "Coffee is healthy", k: 3, tier: .mid))
            #expect(result.agreement == 0.45)
            #expect(result.answer.hasPrefix("Moderate consensus across 3 models"))
            // Its stance is qualified where the others' is affirmative: it dissents with "partly".
            #expect(result.verdict == .true)
            #expect(result.dissent == [Dissent(model: "gemini/fake-c", verdict: .partly, reason: "It depends on the context.")])

            // Other tiers keep the default.
            let cheap = try await h.client.consensus(ConsensusRequest(claim: "Coffee is healthy", k: 3, tier: .cheap))
            #expect(cheap.agreement == 0.82)
            #expect(cheap.dissent.isEmpty)
        }
    }

    @Test func promptRulesBeatTierRules() async throws {
        try await withTribunal(token: Self.token) { h in
            await h.fake.setAgreement(0.9, forTier: .cheap)
            await h.fake.setAgreement(0.3, whenPromptContains: "moon")
            let moon = try await h.client.consensus(ConsensusRequest(claim: "The moon is made of cheese", k: 4))
            let sun = try await h.client.consensus(ConsensusRequest(claim: "The sun is a star", k: 4))
            #expect(moon.agreement == 0.3)
            #expect(moon.dissent.map(\.model) == ["openrouter/fake-d"])
            #expect(sun.agreement == 0.9)
        }
    }

    @Test func failedModelsCountAsAskedButNotAnswered() async throws {
        try await withTribunal(token: Self.token) { h in
            await h.fake.setFailingModels(1)
            let result = try await h.client.consensus(ConsensusRequest(claim: "claim", k: 3))
            #expect(result.answered == 2)
            #expect(result.asked == 3)
            #expect(result.models == ["openai/fake-a", "deepseek/fake-b"])
        }
    }

    @Test func oneAnsweringModelStillGivesAResult() async throws {
        try await withTribunal(token: Self.token) { h in
            await h.fake.setFailingModels(2)
            let result = try await h.client.consensus(ConsensusRequest(claim: "Tea has caffeine", k: 3))
            #expect(result.answered == 1)
            #expect(result.asked == 3)
            #expect(result.agreement == 0)
            // "Insufficient responses (1/3 valid)." says nothing; the one real answer does.
            #expect(result.answer == "Yes, this holds. fake-a agrees with: Tea has caffeine")
            #expect(result.models == ["openai/fake-a"])
        }
    }

    @Test func allModelsFailingIsAProviderFailure() async throws {
        try await withTribunal(token: Self.token) { h in
            await h.fake.failProviderNext(path: FakeRheaTribunal.tribunalPath)
            let error = try #require(await failure { try await h.client.consensus(ConsensusRequest(claim: "x", k: 3)) })
            #expect(error == .providerFailed(detail: "all 3 models failed: fake provider error: upstream returned HTTP 500"))
            expectPresentable(error, secrets: [Self.token])
        }
    }

    @Test func overLongPromptIsRejectedLocally() async throws {
        try await withTribunal(token: Self.token) { h in
            let claim = String(repeating: "é", count: 10_001)
            let error = try #require(await failure { try await h.client.consensus(ConsensusRequest(claim: claim)) })
            guard case .rejected(let detail) = error else {
                Issue.record("expected .rejected, got \(error)")
                return
            }
            #expect(detail.contains("10001") && detail.contains("10000"))
            #expect(await h.fake.requestCount() == 0)
        }
    }

    @Test func withoutCredentialsDialogIsUsedAndItsScoreIsTheAnsweredShare() async throws {
        try await withTribunal { h in
            let result = try await h.client.consensus(ConsensusRequest(claim: "Is Rust memory safe?", k: 5, tier: .frontier))
            #expect(result.scoreMeaning == .answeredShare)
            #expect(result.answer == "[dialog] Is Rust memory safe?")
            #expect(result.agreement == 1.0)
            #expect(result.answered == 2)
            #expect(result.asked == 2)
            #expect(result.confidence == nil)
            #expect(result.verdict == nil)
            #expect(await h.fake.requestCount(path: FakeRheaTribunal.tribunalPath) == 0)
            let sent = try #require(await h.fake.lastRequest(path: FakeRheaTribunal.dialogPath))
            #expect(sent.body == ["text": "Is Rust memory safe?", "sender": "rhea-relay"])
            #expect(sent.header("authorization") == nil && sent.header("x-api-key") == nil)
        }
    }

    @Test func dialogWithOneModelAnsweringIsHalf() async throws {
        try await withTribunal { h in
            await h.fake.setDialogModelsResponded(1)
            let result = try await h.client.consensus(ConsensusRequest(claim: "claim"))
            #expect(result.answered == 1)
            #expect(result.asked == 2)
            #expect(result.agreement == 0.5)
        }
    }

    @Test func dialogFailuresAreProviderFailures() async throws {
        try await withTribunal { h in
            await h.fake.failProviderNext(path: FakeRheaTribunal.dialogPath)
            let errorText = try #require(await failure { try await h.client.consensus(ConsensusRequest(claim: "claim")) })
            #expect(errorText == .providerFailed(detail: "fake bridge failure (all providers down)"))

            await h.fake.setDialogModelsResponded(0)
            let nobody = try #require(await failure { try await h.client.consensus(ConsensusRequest(claim: "claim")) })
            #expect(nobody == .providerFailed(detail: "no model answered"))
            expectPresentable(nobody)
        }
    }

    @Test func dialogTextLimitIsFiveThousand() async throws {
        try await withTribunal { h in
            let error = try #require(
                await failure { try await h.client.consensus(ConsensusRequest(claim: String(repeating: "z", count: 5001))) })
            guard case .rejected(let detail) = error else {
                Issue.record("expected .rejected, got \(error)")
                return
            }
            #expect(detail.contains("5001") && detail.contains("5000"))
            #expect(await h.fake.requestCount() == 0)
        }
    }

    @Test func healthReportsStatusAndProviders() async throws {
        try await withTribunal { h in
            await h.fake.setHealth(status: "ok", providersAvailable: 4, providersTotal: 6)
            let health = try await h.client.health()
            #expect(health.endpoint == h.fake.url)
            #expect(health.status == "ok")
            #expect(health.detail == "4/6 providers, 32 models")
            #expect(await h.fake.lastRequest(path: FakeRheaTribunal.healthPath)?.method == "GET")
        }
    }
}
