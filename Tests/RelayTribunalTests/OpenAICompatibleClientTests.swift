import AsyncHTTPClient
import Foundation
import Logging
import RelayCore
import RelayHTTP
import RelayTestSupport
import Testing

@testable import RelayTribunal

/// The council's HTTP client against real fake servers on 127.0.0.1.
@Suite("OpenAI-compatible client", .serialized)
struct OpenAICompatibleClientTests {
    static let claim =
        "The Eiffel Tower is in Paris and was finished in 1889, which makes it older than the Statue of Liberty."
    static let messages: [ChatMessage] = [.system("Answer with JSON."), .user(claim)]

    // MARK: What is sent

    @Test func sendsTheChatCompletionBodyAndHeaders() async throws {
        try await withOpenAIFake { fake, client, logs in
            let model = fake.model(apiKey: "sk-test-0123456789abcdef", id: "gpt-4o-mini")
            _ = try await client.complete(model, messages: Self.messages, temperature: 0.2, maxTokens: 300, timeout: .seconds(10))

            let sent = try #require(fake.lastRequest())
            #expect(sent.method == "POST")
            #expect(sent.path == "/v1/chat/completions")
            #expect(sent["model"] == "gpt-4o-mini")
            #expect(
                sent["messages"]
                    == [
                        ["role": "system", "content": "Answer with JSON."],
                        ["role": "user", "content": .string(Self.claim)],
                    ])
            #expect(sent["temperature"]?.doubleValue == 0.2)
            #expect(sent["max_tokens"] == 300)
            #expect(sent["stream"] == false)
            #expect(sent.header("authorization") == "Bearer sk-test-0123456789abcdef")
            #expect(sent.header("content-type") == "application/json")
            #expect(sent.header("accept") == "application/json")
            #expect(logs.text.contains("Council model answered"))
            #expect(logs.text.contains(#""council.model": fake"#))
            #expect(!logs.text.contains("sk-test-0123456789abcdef"))
        }
    }

    /// `usage` read as the server counted it, priced as configured; a server that counts nothing
    /// is estimated from the text, and marked so; a non-streamed request asks no `stream_options`.
    @Test func theServersTokenCountIsReadAndPriced() async throws {
        try await withOpenAIFake { fake, client, _ in
            var model = fake.model()
            model.price = ModelPrice(inPerMillion: 2, outPerMillion: 8)
            let completion = try await client.complete(model, messages: Self.messages, timeout: .seconds(10))
            #expect(fake.lastRequest()?["stream_options"] == nil)
            let promptTokens = Self.messages.map(\.content.count).reduce(0, +) / 4
            #expect(completion.usage.tokensIn == promptTokens && completion.usage.tokensOut == max(1, completion.text.count / 4))
            #expect(!completion.usage.estimated && completion.usage.model == "fake")
            #expect(completion.usage.cost == (Double(completion.usage.tokensIn) * 2 + Double(completion.usage.tokensOut) * 8) / 1_000_000)

            fake.setReportsUsage(false)
            let estimated = try await client.complete(fake.model(), messages: Self.messages, timeout: .seconds(10))
            #expect(estimated.usage.estimated && estimated.usage.cost == nil)
            #expect(estimated.usage.tokensOut == TokenEstimate.text(estimated.text))
        }
    }

    @Test func defaultsAreTemperature03And512Tokens() async throws {
        try await withOpenAIFake { fake, client, _ in
            _ = try await client.complete(fake.model(), messages: Self.messages, timeout: .seconds(10))
            #expect(fake.lastRequest()?["temperature"]?.doubleValue == 0.3)
            #expect(fake.lastRequest()?["max_tokens"] == 512)
        }
    }

    @Test(arguments: [nil, "", "  "] as [String?])
    func noAuthorizationHeaderWithoutAKey(key: String?) async throws {
        try await withOpenAIFake { fake, client, _ in
            _ = try await client.complete(fake.model(apiKey: key), messages: Self.messages, timeout: .seconds(10))
            #expect(fake.lastRequest()?.header("authorization") == nil)
        }
    }

    @Test func baseURLWithOrWithoutSlashAndV1() async throws {
        try await withOpenAIFake { fake, client, _ in
            let root = "http://127.0.0.1:\(fake.port)"
            let bases = [fake.url, fake.url + "/", root, root + "/"]
            for base in bases {
                let model = CouncilModel(name: "fake", baseURL: base, model: "m", tier: .cheap)
                let answer = try await client.complete(model, messages: Self.messages, timeout: .seconds(10))
                #expect(answer.text.hasPrefix(#"{"verdict":"true""#), "base \(base)")
            }
            #expect(
                fake.requests().map(\.path)
                    == ["/v1/chat/completions", "/v1/chat/completions", "/chat/completions", "/chat/completions"])
        }
    }

    // MARK: What is read

    static let personaContents: [(FakeOpenAIPersona, String)] = [
        (
            .agree,
            #"{"verdict":"true","confidence":0.9,"answer":"Yes. The Eiffel Tower is in Paris and was finished in 1889, which"}"#
        ),
        (
            .disagree,
            #"{"verdict":"false","confidence":0.8,"answer":"No. The Eiffel Tower is in Paris and was finished in 1889, which"}"#
        ),
        (
            .partly,
            #"{"verdict":"partly","confidence":0.6,"answer":"Partly. The Eiffel Tower is in Paris and was finished in 1889, which"}"#
        ),
        (
            .verdict(.unverifiable, confidence: 0.4, answer: "Nobody knows."),
            #"{"verdict":"unverifiable","confidence":0.4,"answer":"Nobody knows."}"#
        ),
        (
            .jsonInProse(.true, confidence: 0.7),
            "Sure! Here is my judgement:\n```json\n"
                + #"{"verdict":"true","confidence":0.7,"answer":"Yes. The Eiffel Tower is in Paris and was finished in 1889, which"}"#
                + "\n```\nHope this helps."
        ),
        (.prose("I think that is correct, it is true."), "I think that is correct, it is true."),
        (.malformedJSON, #"{"verdict": "true", "confidence":"#),
        (.echo, "[gpt-test] \(claim)"),
        (
            .slow(seconds: 0.05, then: .disagree),
            #"{"verdict":"false","confidence":0.8,"answer":"No. The Eiffel Tower is in Paris and was finished in 1889, which"}"#
        ),
    ]

    @Test(arguments: 0..<personaContents.count)
    func eachPersonaIsDecoded(index: Int) async throws {
        let (persona, expected) = Self.personaContents[index]
        try await withOpenAIFake(persona: persona) { fake, client, _ in
            let answer = try await client.complete(fake.model(id: "gpt-test"), messages: Self.messages, timeout: .seconds(10))
            #expect(answer.text == expected)
            #expect(answer.model == "gpt-test")
            #expect(answer.elapsed > .zero)
        }
    }

    @Test func malformedBodyIsMalformed() async throws {
        try await withOpenAIFake(persona: .malformedBody) { fake, client, _ in
            let error = await client.outcome(fake.model(), messages: Self.messages, timeout: .seconds(10)).failure
            #expect(error == .malformed(reason: "answer is not a JSON object"))
        }
    }

    @Test func blankContentIsAnEmptyAnswer() async throws {
        try await withOpenAIFake(persona: .prose(" \n ")) { fake, client, _ in
            let error = await client.outcome(fake.model(), messages: Self.messages, timeout: .seconds(10)).failure
            #expect(error == .malformed(reason: "empty answer"))
            #expect(error?.reason == "empty answer")
        }
    }

    // MARK: Statuses

    @Test func wrongKeyIsUnauthorizedWithoutLeakingIt() async throws {
        let key = "sk-wrong-9876543210zyxw"
        try await withOpenAIFake(requiredKey: "sk-right-0123456789abcd") { fake, client, logs in
            let error = try #require(
                await client.outcome(fake.model(apiKey: key), messages: Self.messages, timeout: .seconds(10)).failure)
            guard case .unauthorized(let detail) = error else {
                Issue.record("expected .unauthorized, got \(error)")
                return
            }
            #expect(detail.hasPrefix("Incorrect API key provided: [key]."))
            for text in [
                error.reason, "\(error)", error.tribunalError(modelName: "m", url: fake.url).userMessage, logs.text,
            ] {
                #expect(!text.contains(key))
                #expect(!text.contains("zyxw"), "the masked key's tail leaked: \(text)")
                #expect(!text.contains("sk-"), "a key prefix leaked: \(text)")
            }
        }
    }

    @Test func missingKeyIsUnauthorized() async throws {
        try await withOpenAIFake(requiredKey: "sk-right-0123456789abcd") { fake, client, _ in
            let error = await client.outcome(fake.model(), messages: Self.messages, timeout: .seconds(10)).failure
            #expect(error?.reason.hasPrefix("unauthorized: Incorrect API key provided.") == true)
        }
    }

    static let statusCases: [(FakeOpenAIPersona, ModelCallError)] = [
        (.fail(status: 403, message: "Country not supported"), .unauthorized(detail: "Country not supported")),
        (
            .fail(status: 404, message: "The model `m` does not exist"),
            .notFound(detail: "The model `m` does not exist")
        ),
        (.fail(status: 429, message: "Rate limit reached"), .rateLimited(retryAfter: .seconds(1))),
        (
            .fail(status: 500, message: "The server had an error"),
            .serverError(status: 500, detail: "The server had an error")
        ),
        (.fail(status: 503, message: "Overloaded"), .serverError(status: 503, detail: "Overloaded")),
        (
            .fail(status: 400, message: "max_tokens is too large"),
            .rejected(status: 400, detail: "max_tokens is too large")
        ),
        (.fail(status: 422, message: "Unprocessable"), .rejected(status: 422, detail: "Unprocessable")),
    ]

    @Test(arguments: 0..<statusCases.count)
    func statusesMapToErrors(index: Int) async throws {
        let (persona, expected) = Self.statusCases[index]
        try await withOpenAIFake(persona: persona) { fake, client, _ in
            let error = await client.outcome(fake.model(), messages: Self.messages, timeout: .seconds(10)).failure
            #expect(error == expected)
            #expect(fake.requestCount() == 1, "no retries inside the client")
        }
    }

    // MARK: Transport

    @Test func nothingListeningIsUnreachableAtOnce() async throws {
        try await withOpenAIFake { _, client, _ in
            // Port 1: nothing listens there (a stopped fake's port could be reused meanwhile).
            let model = CouncilModel(name: "gone", baseURL: "http://127.0.0.1:1/v1", model: "m", tier: .cheap)
            // Refused, not timed out: the call did not wait for its deadline.
            let error = await client.outcome(model, messages: Self.messages, timeout: .seconds(10)).failure
            #expect(error == .unreachable(reason: "connection refused"))
        }
    }

    @Test func notHTTPIsUnreachable() async throws {
        try await withOpenAIFake { _, client, _ in
            let model = CouncilModel(name: "bad", baseURL: "127.0.0.1:8080/v1", model: "m", tier: .cheap)
            let error = await client.outcome(model, messages: Self.messages, timeout: .seconds(10)).failure
            #expect(error == .unreachable(reason: "base URL is not an http(s) URL"))
        }
    }

    @Test func slowAnswerTimesOut() async throws {
        try await withOpenAIFake(persona: .slow(seconds: 60, then: .agree)) { fake, client, _ in
            let error = await client.outcome(fake.model(), messages: Self.messages, timeout: .milliseconds(300)).failure
            #expect(error == .timedOut(after: .milliseconds(300)))
            #expect(error?.reason == "timed out after 0.3 s")
        }
    }

    @Test func cancellingAHangingCallReturnsPromptly() async throws {
        try await withOpenAIFake(persona: .hang) { fake, client, _ in
            let model = fake.model()
            let call = Task { await client.outcome(model, messages: Self.messages, timeout: .seconds(30)) }
            // Cancel it in flight: once the fake holds the request (it never answers).
            _ = try #require(await fake.next())
            call.cancel()
            // Cancelled, not timed out after its 30 s: the call ended when it was cancelled.
            let result = await call.value
            #expect(result.failure == .cancelled)
            #expect(fake.requestCount() == 1)
        }
    }

    @Test func alreadyCancelledSendsNothing() async throws {
        try await withOpenAIFake { fake, client, _ in
            let model = fake.model()
            let call = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return await client.outcome(model, messages: Self.messages, timeout: .seconds(10))
            }
            #expect(await call.value.failure == .cancelled)
            #expect(fake.requestCount() == 0)
        }
    }

    // MARK: A real server

    /// A real OpenAI-compatible server: llama.cpp (`LocalModelServer`, `scripts/local-model start`).
    @Test func answersFromARealLlamaCppServer() async throws {
        let baseURL = try await LocalModelServer.url()
        let http = HTTPTransport.makeClient()
        defer { _ = http.shutdown() }
        let client = OpenAICompatibleClient(transport: HTTPTransport(client: http), logger: Logger(label: "test.council"))
        let model = CouncilModel(name: "local", baseURL: baseURL, model: LocalModelServer.model, tier: .cheap)
        let answer = try await client.complete(
            model, messages: [.user("Say hello in one word.")], maxTokens: 16, timeout: .seconds(60))
        #expect(!answer.text.isEmpty)
        #expect(answer.model != nil)
        // Its whole answers carry `usage`: the count is the server's, not an estimate.
        #expect(!answer.usage.estimated && answer.usage.tokensIn > 0 && answer.usage.tokensOut > 0, "\(answer.usage)")
        // Its streams carry none, `stream_options` or not: the count is estimated, and says so.
        let streamed = try await client.stream(model, messages: [.user("Say hello in one word.")], maxTokens: 16, timeout: .seconds(60)) { _ in }
        #expect(streamed.usage.estimated && streamed.usage.tokensOut == TokenEstimate.text(streamed.text), "\(streamed.usage)")
    }
}

/// Decoding, reasons and error mapping, without sockets.
@Suite("OpenAI-compatible client: wire and errors")
struct OpenAICompatibleClientWireTests {
    func text(_ json: String) -> String? {
        if case .text(let text, _, _) = OpenAIWire.answer(from: Array(json.utf8)) { return text }
        return nil
    }

    @Test func readsTolerantly() {
        #expect(text(#"{"choices":[{"message":{"content":"  hi  "}}]}"#) == "hi")
        #expect(text(#"{"choices":[{"text":"legacy"}],"model":7}"#) == "legacy")
        #expect(
            text(#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}"#)
                == "ab")
        #expect(
            text(#"{"id":1,"choices":[{"index":"x","message":{"role":null,"content":"ok","extra":{}}}],"usage":"?"}"#)
                == "ok")
        if case .text(_, let model, _) = OpenAIWire.answer(from: Array(#"{"model":"m-1","choices":[{"text":"x"}]}"#.utf8)) {
            #expect(model == "m-1")
        } else {
            Issue.record("expected a text answer")
        }
    }

    /// A count no call can have (a broken or hostile server's) is read as none and estimated:
    /// it never enters a sum that could overflow.
    @Test func anImplausibleTokenCountIsEstimatedInstead() {
        let body = #"{"choices":[{"message":{"content":"ok"}}],"usage":{"prompt_tokens":9223372036854775807,"completion_tokens":-4}}"#
        guard case .text(_, _, let usage) = OpenAIWire.answer(from: Array(body.utf8)) else {
            Issue.record("expected a text answer")
            return
        }
        #expect(usage?.promptTokens == nil && usage?.completionTokens == nil)
        let counted = OpenAICompatibleClient.usage(
            of: CouncilModel(name: "m", baseURL: "http://127.0.0.1:9/v1", model: "m", tier: .cheap), messages: [.user("hi")], answer: "ok",
            reported: usage, elapsed: .zero)
        #expect(counted.estimated && counted.tokensIn == TokenEstimate.prompt(["hi"]) && counted.tokensOut == 1)
    }

    @Test func explainsUnreadableAnswers() {
        func reason(_ json: String) -> String? {
            if case .malformed(let reason) = OpenAIWire.answer(from: Array(json.utf8)) { return reason }
            return nil
        }
        #expect(reason("[1,2]") == "answer is not a JSON object")
        #expect(reason("{}") == "no choices in the answer")
        #expect(reason(#"{"choices":[{"message":{}}]}"#) == "no content in the answer")
        #expect(reason(#"{"choices":[{"message":{"content":""}}]}"#) == "empty answer")
    }

    @Test func errorInsideA200IsAnError() {
        let body = #"{"error":{"message":"Provider returned error","code":429}}"#
        guard case .embeddedError(let message, let code) = OpenAIWire.answer(from: Array(body.utf8)) else {
            Issue.record("expected an embedded error")
            return
        }
        #expect(message == "Provider returned error")
        #expect(code == 429)
    }

    @Test func errorDetailsFromEveryShape() {
        func detail(_ body: String, key: String? = nil) -> String {
            OpenAIErrorDetail.readable(from: Array(body.utf8), status: 418, apiKey: key)
        }
        #expect(detail(#"{"error":{"message":"bad model","type":"x"}}"#) == "bad model")
        #expect(detail(#"{"error":"model 'llama3' not found"}"#) == "model 'llama3' not found")
        #expect(detail(#"{"detail":"Not authenticated"}"#) == "Not authenticated")
        #expect(detail("plain\ntext") == "plain text")
        #expect(detail("<html>502</html>") == "HTTP 418")
        #expect(detail("") == "HTTP 418")
        #expect(detail(String(repeating: "x", count: 500)).count == OpenAIErrorDetail.maxLength)
        #expect(detail("key my-secret-key-value is wrong", key: "my-secret-key-value") == "key [key] is wrong")
    }

    @Test func endpointJoinsWithoutDoubleSlash() {
        #expect(
            OpenAICompatibleClient.endpoint(baseURL: "https://api.openai.com/v1/")
                == "https://api.openai.com/v1/chat/completions")
        #expect(OpenAICompatibleClient.endpoint(baseURL: " http://h:1 ") == "http://h:1/chat/completions")
    }

    @Test func reasonsAreOneShortLine() {
        let cases: [(ModelCallError, String)] = [
            (.unauthorized(detail: "invalid api key"), "unauthorized: invalid api key"),
            (.notFound(detail: "no such model"), "HTTP 404: no such model"),
            (.rateLimited(retryAfter: .seconds(1)), "rate limited (retry after 1 s)"),
            (.rateLimited(retryAfter: nil), "rate limited"),
            (.serverError(status: 502, detail: "bad gateway"), "HTTP 502: bad gateway"),
            (.rejected(status: 400, detail: "bad"), "HTTP 400: bad"),
            (.timedOut(after: .seconds(20)), "timed out after 20 s"),
            (.timedOut(after: .milliseconds(2500)), "timed out after 2.5 s"),
            (.timedOut(after: .milliseconds(250)), "timed out after 0.25 s"),
            (.unreachable(reason: "connection refused"), "connection refused"),
            (.malformed(reason: "empty answer"), "empty answer"),
            (.cancelled, "cancelled"),
        ]
        for (error, reason) in cases {
            #expect(error.reason == reason)
        }
    }

    @Test func mapsToTribunalErrors() {
        let url = "http://127.0.0.1:1/v1"
        let cases: [(ModelCallError, TribunalError)] = [
            (.unauthorized(detail: "nope"), .unauthorized(detail: "model mini: nope")),
            (.notFound(detail: "x"), .rejected(detail: "model mini: not found at \(url) — check baseURL and model id")),
            (.rateLimited(retryAfter: .milliseconds(1200)), .rateLimited(detail: "model mini is rate-limited", retryAfter: 2)),
            (.rateLimited(retryAfter: nil), .rateLimited(detail: "model mini is rate-limited", retryAfter: 60)),
            (.serverError(status: 503, detail: "busy"), .serverError(status: 503, detail: "model mini: busy")),
            (.rejected(status: 400, detail: "bad"), .rejected(detail: "model mini: HTTP 400: bad")),
            (.timedOut(after: .seconds(20)), .timedOut(url: url, after: .seconds(20), setting: Self.timeoutSetting)),
            (.unreachable(reason: "connection refused"), .unreachable(url: url, reason: "connection refused")),
            (.malformed(reason: "empty answer"), .malformedResponse(url: url, reason: "model mini: empty answer")),
            (.cancelled, .timedOut(url: url, after: .seconds(0), setting: "council.deadline (COUNCIL_DEADLINE)")),
        ]
        for (error, expected) in cases {
            #expect(error.tribunalError(modelName: "mini", url: url) == expected)
        }
        #expect(
            ModelCallError.cancelled.tribunalError(modelName: "mini", url: url, deadline: .seconds(30))
                == .timedOut(url: url, after: .seconds(30), setting: "council.deadline (COUNCIL_DEADLINE)"))
        // The operator is told which setting to raise: the council's, not the gateway's, or the
        // model's own where it sets one.
        #expect(
            ModelCallError.timedOut(after: .seconds(20)).tribunalError(modelName: "mini", url: url).operatorMessage.hasSuffix(
                "raise the timeout (\(Self.timeoutSetting)).")
        )
        #expect(
            ModelCallError.timedOut(after: .seconds(20)).tribunalError(modelName: "mini", url: url, ownTimeout: true).operatorMessage.hasSuffix(
                "raise the timeout (council.mini.timeout).")
        )
    }

    static let timeoutSetting = "council.timeout (COUNCIL_TIMEOUT)"
}

// MARK: Helpers

extension OpenAICompatibleClient {
    /// `complete` as a `Result`, so tests can look at the typed error without a closure.
    fileprivate func outcome(
        _ model: CouncilModel, messages: [ChatMessage], temperature: Double = 0.3, maxTokens: Int = 512, timeout: Duration
    ) async -> Result<ChatCompletion, ModelCallError> {
        do {
            return .success(
                try await complete(
                    model, messages: messages, temperature: temperature, maxTokens: maxTokens, timeout: timeout))
        } catch {
            return .failure(error)
        }
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension FakeOpenAIServer {
    /// A council model pointing at this fake.
    fileprivate func model(apiKey: String? = nil, id: String = "fake-model") -> CouncilModel {
        CouncilModel(name: "fake", baseURL: url, apiKey: apiKey, model: id, tier: .cheap)
    }
}

/// Starts a fake and a client for it, runs `body`, and tears both down.
private func withOpenAIFake(
    persona: FakeOpenAIPersona = .agree,
    requiredKey: String? = nil,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (FakeOpenAIServer, OpenAICompatibleClient, LogCapture) async throws -> Void
) async throws {
    let http = HTTPTransport.makeClient(maxConnectionsPerHost: 8)
    let logs = LogCapture()
    let client = OpenAICompatibleClient(transport: HTTPTransport(client: http), logger: logs.logger)
    do {
        try await withFakeOpenAIServer(persona: persona, requiredKey: requiredKey) { fake in
            try await body(fake, client, logs)
        }
        try await http.shutdown()
    } catch {
        try? await http.shutdown()
        throw error
    }
}
