import RelayCore
import RelayTestSupport
import RelayTribunal
import Testing

@Suite("credentials")
struct AuthTests {
    static let token = FakeRheaTribunal.defaultToken
    static let key = FakeRheaTribunal.defaultAPIKey

    @Test func bearerTokenWinsOverAPIKey() async throws {
        try await withTribunal(token: Self.token, apiKey: Self.key, developmentMode: true) { h in
            _ = try await h.client.consensus(ConsensusRequest(claim: "claim"))
            let sent = try #require(await h.fake.lastRequest(path: FakeRheaTribunal.tribunalPath))
            #expect(sent.header("authorization") == "Bearer \(Self.token)")
            #expect(sent.header("x-api-key") == nil)
        }
    }

    @Test func apiKeyIsSentAsXAPIKey() async throws {
        try await withTribunal(apiKey: Self.key) { h in
            _ = try await h.client.consensus(ConsensusRequest(claim: "claim"))
            let sent = try #require(await h.fake.lastRequest(path: FakeRheaTribunal.tribunalPath))
            #expect(sent.header("x-api-key") == Self.key)
            #expect(sent.header("authorization") == nil)
        }
    }

    @Test func devBypassOnlyInDevelopmentMode() async throws {
        try await withTribunal(developmentMode: true) { h in
            let result = try await h.client.consensus(ConsensusRequest(claim: "claim"))
            #expect(result.scoreMeaning == .agreement)
            let sent = try #require(await h.fake.lastRequest(path: FakeRheaTribunal.tribunalPath))
            #expect(sent.header("x-api-key") == "dev-bypass")
        }
        try await withTribunal(developmentMode: false) { h in
            _ = try await h.client.consensus(ConsensusRequest(claim: "claim"))
            #expect(await h.fake.requestCount(path: FakeRheaTribunal.tribunalPath) == 0)
            let sent = try #require(await h.fake.lastRequest(path: FakeRheaTribunal.dialogPath))
            #expect(sent.header("x-api-key") == nil)
        }
    }

    @Test func configurationKnowsWhetherTribunalIsUsable() {
        #expect(!RheaTribunalConfiguration().hasCredentials)
        #expect(!RheaTribunalConfiguration(token: "  ", apiKey: "").hasCredentials)
        #expect(RheaTribunalConfiguration(token: "t").hasCredentials)
        #expect(RheaTribunalConfiguration(apiKey: "k").hasCredentials)
        #expect(RheaTribunalConfiguration(developmentMode: true).hasCredentials)
        #expect(RheaTribunalConfiguration().baseURL == "https://rhea-tribunal.fly.dev")
    }

    @Test func refusedTokenIsUnauthorizedAndNeverShown() async throws {
        let badToken = "eyJhbGciOiJIUzI1NiJ9.expired-secret-token.sig"
        try await withTribunal(token: badToken) { h in
            let error = try #require(await failure { try await h.client.consensus(ConsensusRequest(claim: "claim")) })
            #expect(error == .unauthorized(detail: "Invalid or missing API key. Sign up at /auth/signup"))
            expectPresentable(error, secrets: [badToken])
            // A 401 is not retried.
            #expect(await h.fake.requestCount(path: FakeRheaTribunal.tribunalPath) == 1)
        }
    }

    @Test func unknownCustomerKeyIsUnauthorized() async throws {
        let badKey = "rk_not_a_real_key_123"
        try await withTribunal(apiKey: badKey) { h in
            let error = try #require(await failure { try await h.client.consensus(ConsensusRequest(claim: "claim")) })
            #expect(error == .unauthorized(detail: "Invalid API key"))
            expectPresentable(error, secrets: [badKey])
        }
    }

    @Test func devBypassRefusedWhereTheServerDisallowsIt() async throws {
        try await withTribunal(developmentMode: true, allowDevBypass: false) { h in
            let error = try #require(await failure { try await h.client.consensus(ConsensusRequest(claim: "claim")) })
            guard case .unauthorized = error else {
                Issue.record("expected .unauthorized, got \(error)")
                return
            }
        }
    }
}
