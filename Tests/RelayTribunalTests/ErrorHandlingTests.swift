import RelayCore
import RelayTestSupport
import RelayTribunal
import Testing

@Suite("HTTP errors, retries, rate limits and timeouts")
struct ErrorHandlingTests {
    static let token = FakeRheaTribunal.defaultToken
    static let claim = ConsensusRequest(claim: "Is the sky blue?", k: 3)

    @Test func paymentRequiredCarriesTheServerDetail() async throws {
        try await withTribunal(token: Self.token) { h in
            await h.fake.failNext(path: FakeRheaTribunal.tribunalPath, status: 402)
            let error = try #require(await failure { try await h.client.consensus(Self.claim) })
            #expect(
                error
                    == .paymentRequired(
                        detail: "Insufficient credits. Need 3 for tribunal, have 0. Buy credits at /billing/credits/buy"))
            expectPresentable(error, secrets: [Self.token])
            #expect(await h.fake.requestCount() == 1)
        }
    }

    @Test func validationErrorsAreMadeReadable() async throws {
        try await withTribunal(token: Self.token) { h in
            // Default 422 body: the contract's verified pydantic shape for k = 1.
            await h.fake.failNext(path: FakeRheaTribunal.tribunalPath, status: 422)
            let error = try #require(await failure { try await h.client.consensus(Self.claim) })
            #expect(error == .rejected(detail: "k: Input should be greater than or equal to 2"))
            expectPresentable(error, secrets: [Self.token])
            #expect(await h.fake.requestCount() == 1)
        }
    }

    @Test func otherClientErrorsAreRejections() async throws {
        try await withTribunal { h in
            await h.fake.failNext(path: FakeRheaTribunal.quickPath, status: 400, detail: "Unknown target")
            let error = try #require(await failure { try await h.client.quick(QuickRequest(action: .grammar, text: "x")) })
            #expect(error == .rejected(detail: "Unknown target"))
            #expect(await h.fake.requestCount() == 1)
        }
    }

    @Test func rateLimitHoldsFurtherCallsBackWithoutSendingThem() async throws {
        try await withTribunal(token: Self.token) { h in
            await h.fake.failNext(path: FakeRheaTribunal.tribunalPath, status: 429)
            let first = try #require(await failure { try await h.client.consensus(Self.claim) })
            #expect(first == .rateLimited(detail: "Rate limit (30/min) exceeded", retryAfter: 60))
            expectPresentable(first, secrets: [Self.token])

            let second = try #require(await failure { try await h.client.consensus(Self.claim) })
            guard case .rateLimited(let detail, let retryAfter) = second else {
                Issue.record("expected .rateLimited, got \(second)")
                return
            }
            #expect(detail == "Rate limit (30/min) exceeded")
            #expect((1...60).contains(retryAfter))
            #expect(await h.fake.requestCount(path: FakeRheaTribunal.tribunalPath) == 1)

            // The server limits only /tribunal; quick calls still go through.
            _ = try await h.client.quick(QuickRequest(action: .grammar, text: "x"))
            #expect(await h.fake.requestCount(path: FakeRheaTribunal.quickPath) == 1)
        }
    }

    @Test func retryAfterLongerThanTheCooldownIsHonoured() async throws {
        try await withTribunal(token: Self.token) { h in
            await h.fake.script(.rateLimitedWithRetryAfter(seconds: 120), path: FakeRheaTribunal.tribunalPath)
            let error = try #require(await failure { try await h.client.consensus(Self.claim) })
            #expect(error == .rateLimited(detail: "Rate limit (30/min) exceeded", retryAfter: 120))
        }
    }

    @Test func callsResumeAfterTheCooldown() async throws {
        let clock = ManualClock()
        try await withTribunal(token: Self.token, rateLimitCooldown: .seconds(60), clock: clock) { h in
            await h.fake.failNext(path: FakeRheaTribunal.tribunalPath, status: 429)
            _ = await failure { try await h.client.consensus(Self.claim) }
            clock.advance(by: .seconds(59))
            _ = await failure { try await h.client.consensus(Self.claim) }
            #expect(await h.fake.requestCount() == 1, "held back locally during the cooldown")
            clock.advance(by: .seconds(1))
            let result = try await h.client.consensus(Self.claim)
            #expect(result.answered == 3)
            #expect(await h.fake.requestCount() == 2)
        }
    }

    @Test func serverErrorsAreRetriedUntilSuccess() async throws {
        try await withTribunal(token: Self.token) { h in
            await h.fake.failNext(path: FakeRheaTribunal.tribunalPath, status: 503, count: 2)
            let result = try await h.client.consensus(Self.claim)
            #expect(result.answered == 3)
            #expect(await h.fake.requestCount(path: FakeRheaTribunal.tribunalPath) == 3)
            #expect(h.logs.text.contains("Retrying Rhea request"))
        }
    }

    @Test func persistentServerErrorsGiveUpAfterTheConfiguredAttempts() async throws {
        let retry = RetryPolicy(attempts: 4, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20))
        try await withTribunal(retry: retry) { h in
            await h.fake.failNext(path: FakeRheaTribunal.quickPath, status: 500, count: 10)
            let error = try #require(await failure { try await h.client.quick(QuickRequest(action: .grammar, text: "x")) })
            #expect(error == .serverError(status: 500, detail: "Internal Server Error"))
            expectPresentable(error)
            #expect(await h.fake.requestCount(path: FakeRheaTribunal.quickPath) == 4)
        }
    }

    @Test func refusedConnectionIsUnreachableQuickly() async throws {
        // Port 1: nothing listens there. (A stopped fake's port could be handed to a fake that
        // another test starts meanwhile.)
        let url = "http://127.0.0.1:1"

        try await withTribunal(baseURL: { _ in url }) { h in
            // Refused, not timed out: no attempt waited for its deadline.
            let error = try #require(await failure { try await h.client.quick(QuickRequest(action: .grammar, text: "x")) })
            #expect(error == .unreachable(url: url, reason: "connection refused"))
            expectPresentable(error)
            #expect(h.logs.text.contains("Retrying Rhea request"))
        }
    }

    @Test func slowAnswerTimesOutWithoutRetry() async throws {
        let timeouts = RheaTribunalConfiguration.Timeouts(quick: .seconds(1), dialog: .seconds(10), tribunal: .seconds(10), health: .seconds(10))
        try await withTribunal(timeouts: timeouts) { h in
            await h.fake.setDelay(path: FakeRheaTribunal.quickPath, seconds: 20)
            let error = try #require(await failure { try await h.client.quick(QuickRequest(action: .grammar, text: "x")) })
            #expect(error == .timedOut(url: h.fake.url, after: .seconds(1)))
            expectPresentable(error)
            #expect(await h.fake.requestCount(path: FakeRheaTribunal.quickPath) == 1)
        }
    }

    @Test func malformedBodyIsMalformedResponse() async throws {
        try await withTribunal(token: Self.token) { h in
            await h.fake.sendMalformedNext(path: FakeRheaTribunal.tribunalPath)
            let error = try #require(await failure { try await h.client.consensus(Self.claim) })
            guard case .malformedResponse(let url, _) = error else {
                Issue.record("expected .malformedResponse, got \(error)")
                return
            }
            #expect(url == h.fake.url)
            expectPresentable(error, secrets: [Self.token])
            // Not retried: the server answered, just not in a form we read.
            #expect(await h.fake.requestCount() == 1)
        }
    }

    @Test func invalidBaseURLIsNotConfigured() async throws {
        try await withTribunal(baseURL: { _ in "not a url" }) { h in
            let error = try #require(await failure { try await h.client.health() })
            guard case .notConfigured = error else {
                Issue.record("expected .notConfigured, got \(error)")
                return
            }
            expectPresentable(error)
        }
    }

    @Test func trailingSlashInBaseURLIsTolerated() async throws {
        try await withTribunal(baseURL: { $0.url + "/" }) { h in
            let health = try await h.client.health()
            #expect(health.endpoint == h.fake.url)
            #expect(await h.fake.requestCount(path: FakeRheaTribunal.healthPath) == 1)
        }
    }
}
