import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayServer
import RelayStore
import RelayTestSupport
import RelayTribunal
import RheaAPI
import Testing

/// Issue 13, points 1–2: `serve` answers the Rhea Tribunal API in the gateway's shapes, over a
/// council of fake models on 127.0.0.1, behind keys stored as digests and HS256 bearer tokens,
/// with a rate limit that says when to come back.
@Suite("serve: the Rhea Tribunal API")
struct RheaAPITests {
    static let key = "rk_test_key_for_the_served_api_0001"
    static let secret = "a-jwt-secret-of-at-least-32-characters!"

    struct Served: Sendable {
        let client: any TestClientProtocol
        let models: [FakeOpenAIServer]
        let logs: LogCapture
        /// The relay's SQLite file, to read what it recorded.
        let storePath: String

        func post(_ path: String, _ body: String, headers: HTTPFields = [.init("X-API-Key")!: RheaAPITests.key]) async throws -> (Int, JSONValue?, HTTPFields) {
            var headers = headers
            headers[.contentType] = "application/json"
            return try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body)) { response in
                (response.status.code, JSONValue.parse(Array(buffer: response.body)), response.headers)
            }
        }

        func get(_ path: String, headers: HTTPFields = [:]) async throws -> (Int, JSONValue?) {
            try await client.execute(uri: path, method: .get, headers: headers) { response in
                (response.status.code, JSONValue.parse(Array(buffer: response.body)))
            }
        }
    }

    /// Three cheap council models that judge claims true and echo other prompts.
    func withAPI(
        persona: FakeOpenAIPersona = .judging(.agree), personas: [FakeOpenAIPersona]? = nil, configure: (inout RheaAPISettings) -> Void = { _ in },
        _ body: @escaping @Sendable (Served) async throws -> Void
    ) async throws {
        var started: [FakeOpenAIServer] = []
        for persona in personas ?? Array(repeating: persona, count: 3) { started.append(try await FakeOpenAIServer.start(persona: persona)) }
        let models = started
        let logs = LogCapture()
        do {
            try await run(models: models, logs: logs, configure: configure, body)
        } catch {
            for model in models { await model.stop() }
            throw error
        }
        for model in models { await model.stop() }
    }

    private func run(
        models: [FakeOpenAIServer], logs: LogCapture, configure: (inout RheaAPISettings) -> Void, _ body: @escaping @Sendable (Served) async throws -> Void
    ) async throws {
        try await TemporaryDatabase.with { db in
            var configuration = AppConfiguration(storePath: db.path)
            configuration.backend = .council(
                CouncilConfiguration(
                    models: models.enumerated().map { index, server in
                        CouncilModel(name: "judge-\(index + 1)", baseURL: server.url, model: "fake-\(index + 1)", tier: .cheap)
                    }, deadline: .seconds(30)))
            var api = RheaAPISettings(enabled: true, keyDigests: [APIKeyFile.digest(of: Self.key)], jwtSecret: Self.secret)
            configure(&api)
            configuration.api = api
            let app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: logs.logger)
            try await app.test(.live) { client in try await body(Served(client: client, models: models, logs: logs, storePath: db.path)) }
        }
    }

    // MARK: the ledger

    @Test func aTribunalAskedThroughTheAPIIsRecordedInTheLedger() async throws {
        try await withAPI { api in
            let (status, _, _) = try await api.post("/tribunal", #"{"prompt": "The Eiffel Tower is in Paris", "k": 3}"#)
            #expect(status == 200)
            _ = try await api.post("/dialog", #"{"text": "Is water wet?"}"#)
            let store = try await SQLiteStore.open(path: api.storePath)
            let entries = try await store.ledgerEntries(team: RheaAPIRoutes.ledgerTeam)
            try await store.close()
            #expect(entries.map(\.claim) == ["The Eiffel Tower is in Paris", "Is water wet?"])
            #expect(entries.allSatisfy { $0.origin == .api && $0.backend == "council" && $0.user.hasPrefix("key:") })
            #expect(entries.first?.judges.count == 3)
            #expect(entries.first?.verdict == .true)
            #expect(!entries.contains { $0.user.contains(RheaAPITests.key) }, "the key itself is never stored")
        }
    }

    // MARK: shapes

    @Test func keyboardQuickAnswersInTheGatewaysShape() async throws {
        try await withAPI { api in
            let (status, body, _) = try await api.post("/keyboard/quick", #"{"text": "hola amigo", "action": "translate", "target_lang": "fr"}"#)
            #expect(status == 200)
            #expect(body?["action"] == "translate")
            #expect(body?["model"] == "judge-1")
            #expect(body?["text"]?.stringValue?.contains("hola amigo") == true)
            #expect(body?["elapsed_s"]?.doubleValue != nil)
            // The model was asked to translate into French.
            let sent = try #require(api.models[0].lastRequest()?.rawBody)
            #expect(sent.contains("French"))

            // An unknown action is a free-form prompt, as on the gateway; the action is echoed.
            let (freeStatus, free, _) = try await api.post("/keyboard/quick", #"{"text": "say hi", "action": "poem"}"#)
            #expect(freeStatus == 200)
            #expect(free?["action"] == "poem")
        }
    }

    @Test func tribunalAnswersJudgeByJudgeWithTheVerdict() async throws {
        try await withAPI { api in
            let (status, body, _) = try await api.post("/tribunal", #"{"prompt": "Water boils at 100 °C at sea level", "k": 3}"#)
            #expect(status == 200)
            let answer = try #require(body)
            #expect(answer["prompt"] == "Water boils at 100 °C at sea level")
            #expect(answer["k"] == 3)
            #expect(answer["mode"] == "local")
            #expect(answer["verdict"] == "true")
            #expect(answer["models_responded"] == 3)
            #expect(answer["models_queried"] == 3)
            #expect((answer["agreement_score"]?.doubleValue ?? 0) > 0.99)
            #expect(answer["responses"]?.arrayValue?.count == 3)
            #expect(answer["responses"]?[0]?["model"] == "judge-1")
            #expect(answer["responses"]?[0]?["error"] == .null)
            #expect(answer["stance_summary"]?["judge-2"]?["stance"] == "affirmative")
            #expect(answer["consensus"]?.stringValue?.isEmpty == false)
        }
    }

    /// As on the gateway, `agreement_score` is agreement among the models; the council's
    /// probability that its verdict is right is `confidence`.
    @Test func agreementScoreIsTheShareThatAgreesAndConfidenceTheProbability() async throws {
        try await withAPI(personas: [.judging(.agree), .judging(.agree), .judging(.disagree)]) { api in
            let (status, body, _) = try await api.post("/tribunal", #"{"prompt": "Water boils at 100 °C at sea level", "k": 3}"#)
            #expect(status == 200)
            let answer = try #require(body)
            #expect(answer["verdict"] == "true")
            let agreement = try #require(answer["agreement_score"]?.doubleValue)
            #expect(abs(agreement - 2.0 / 3.0) < 1e-9, "2 of the 3 that answered agree: \(agreement)")
            let confidence = try #require(answer["confidence"]?.doubleValue)
            #expect(confidence > 0.5 && confidence < 1, "the probability the verdict is right: \(confidence)")
        }
    }

    /// The public Rhea command-line client (`rhea api tribunal CLAIM [--models a,b] [--ice]`)
    /// posts `{"prompt", "models"}` with a content type and no key: a keyed relay refuses it with
    /// a detail it prints; with the key added on the way (docs/rhea-api.md: a proxy that sets
    /// `X-API-Key`) it gets the fields it reads (`agreement_score`, `confidence`, `verdict`).
    @Test func theRheaCommandLineClientsRequestsAreAnsweredAsItReadsThem() async throws {
        try await withAPI { api in
            let body = #"{"prompt": "Water boils at 100 °C at sea level", "models": ["gpt-4o", "claude"]}"#
            let (refused, refusal, _) = try await api.post("/tribunal", body, headers: [:])
            #expect(refused == 401)
            #expect(refusal?["detail"]?.stringValue == "Invalid or missing API key: send X-API-Key or Authorization: Bearer <token>")
            let (status, answer, _) = try await api.post("/tribunal", body)
            #expect(status == 200, "unknown fields such as `models` are ignored")
            #expect(answer?["verdict"] == "true")
            let agreement = try #require(answer?["agreement_score"]?.doubleValue)
            #expect(agreement > 0.5, "the client colours the panel by agreement_score > 50: \(agreement)")
            #expect(answer?["confidence"]?.doubleValue != nil)
            let (ice, iceBody, _) = try await api.post("/tribunal/ice", body)
            #expect(ice == 404 && iceBody == ["detail": "Not Found"], "`--ice` is the gateway's, not served: FastAPI's 404")
        }
    }

    /// As the gateway's FastAPI answers them: a Rhea client reads `detail`.
    @Test func unknownRoutesAnswerJSONLikeTheGateway() async throws {
        try await withAPI { api in
            let (status, body) = try await api.get("/keyboard/nowhere")
            #expect(status == 404)
            #expect(body == ["detail": "Not Found"])
            // A path that exists, asked with another method: FastAPI's 405, with `Allow`.
            for (method, path, allow) in [(HTTPRequest.Method.get, "/tribunal", "POST"), (.delete, "/health", "GET"), (.put, "/keyboard/quick", "POST")] {
                let response = try await api.client.execute(uri: path, method: method, headers: [:], body: nil)
                #expect(response.status == .methodNotAllowed, "\(method) \(path)")
                #expect(response.headers[.allow] == allow, "\(method) \(path)")
                #expect(JSONValue.parse(response.body.readableBytesView) == ["detail": "Method Not Allowed"])
            }
            // The relay's own routes too.
            let health = try await api.client.execute(uri: "/healthz", method: .post, headers: [:], body: nil)
            #expect(health.status == .methodNotAllowed)
            #expect(health.headers[.allow]?.contains("GET") == true)
        }
    }

    @Test func dialogAnswersWithTheShareThatAnswered() async throws {
        try await withAPI { api in
            let (status, body, _) = try await api.post("/dialog", #"{"text": "Is the sky blue?"}"#)
            #expect(status == 200)
            #expect(body?["agreement_score"]?.doubleValue == 1.0)
            #expect(body?["models_responded"] == 2)
            #expect(body?["reply"]?.stringValue?.isEmpty == false)
            #expect(body?["ts"]?.stringValue?.hasSuffix("Z") == true)
        }
    }

    @Test func healthIsOpenAndModelsNeedAKeyAndNameNoAddress() async throws {
        try await withAPI { api in
            let (status, health) = try await api.get("/health")
            #expect(status == 200)
            #expect(health?["status"] == "ok")
            #expect(health?["total_models"] == 3)

            #expect(try await api.get("/models").0 == 401)
            let (modelsStatus, models) = try await api.get("/models", headers: [.init("X-API-Key")!: Self.key])
            #expect(modelsStatus == 200)
            #expect(models?["providers"]?["judge-3"]?["models"] == ["fake-3"])
            #expect(!"\(models ?? .null)".contains("127.0.0.1"), "no base URL is shown")
        }
    }

    // MARK: validation

    @Test func badBodiesGet422InFastAPIsShape() async throws {
        try await withAPI { api in
            // The contract's own example, exactly.
            let (status, body, _) = try await api.post("/tribunal", #"{"prompt": "x", "k": 1}"#)
            #expect(status == 422)
            #expect(
                body == [
                    "detail": [
                        [
                            "type": "greater_than_equal", "loc": ["body", "k"], "msg": "Input should be greater than or equal to 2", "input": 1,
                            "ctx": ["ge": 2],
                        ]
                    ]
                ])

            // Every problem at once.
            let long = String(repeating: "é", count: 5001)
            let (_, several, _) = try await api.post("/keyboard/quick", #"{"text": "\#(long)", "style": 3}"#)
            let types = several?["detail"]?.arrayValue?.compactMap { $0["type"]?.stringValue }
            #expect(types == ["string_too_long", "string_type"])
            #expect(several?["detail"]?[0]?["msg"] == "String should have at most 5000 characters")
            #expect(several?["detail"]?[0]?["ctx"] == ["max_length": 5000])

            let cases: [(String, String, String, JSONValue)] = [
                ("/dialog", #"{"sender": "me"}"#, "missing", ["body", "text"]),
                ("/dialog", #"{"text": ""}"#, "string_too_short", ["body", "text"]),
                ("/tribunal", #"{"prompt": "x", "k": 11}"#, "less_than_equal", ["body", "k"]),
                ("/tribunal", #"{"prompt": "x", "k": "three"}"#, "int_parsing", ["body", "k"]),
                ("/tribunal", #"{"prompt": "x", "k": 2.5}"#, "int_from_float", ["body", "k"]),
                ("/tribunal", #"{"prompt": "x", "system": "\#(String(repeating: "s", count: 2001))"}"#, "string_too_long", ["body", "system"]),
                ("/tribunal", #"["prompt"]"#, "model_attributes_type", ["body"]),
                ("/tribunal", #"{"prompt": "#, "json_invalid", ["body", 0]),
                ("/tribunal", "", "missing", ["body"]),
            ]
            for (path, text, type, loc) in cases {
                let (status, body, _) = try await api.post(path, text)
                #expect(status == 422, "\(path) \(text.prefix(40))")
                #expect(body?["detail"]?[0]?["type"]?.stringValue == type, "\(path) \(text.prefix(40)): \(body ?? .null)")
                #expect(body?["detail"]?[0]?["loc"] == loc, "\(path) \(text.prefix(40))")
            }
            // `"k": "3"` and `3.0` are what Pydantic's lax mode accepts.
            #expect(try await api.post("/tribunal", #"{"prompt": "Water is wet", "k": "3"}"#).0 == 200)
            #expect(api.models.allSatisfy { $0.requestCount() <= 2 }, "no invalid request reached a model")
        }
    }

    // MARK: auth

    @Test func keysAreCheckedByDigestAndBearerTokensByTheirSignatureAndExpiry() async throws {
        try await withAPI { api in
            let claim = #"{"prompt": "Water is wet", "k": 2}"#
            func detail(_ result: (Int, JSONValue?, HTTPFields)) -> String { result.1?["detail"]?.stringValue ?? "" }

            let none = try await api.post("/tribunal", claim, headers: [:])
            #expect(none.0 == 401)
            #expect(detail(none).hasPrefix("Invalid or missing API key"))
            #expect(none.2[.wwwAuthenticate] == "Bearer")
            let wrong = try await api.post("/tribunal", claim, headers: [.init("X-API-Key")!: "rk_not_a_key"])
            #expect(wrong.0 == 401)
            #expect(detail(wrong) == "Invalid API key")
            // The file's line is not a key.
            let digestAsKey = try await api.post("/tribunal", claim, headers: [.init("X-API-Key")!: APIKeyFile.line(for: Self.key)])
            #expect(digestAsKey.0 == 401)
            // Development mode is off: dev-bypass is just a wrong key.
            #expect(try await api.post("/tribunal", claim, headers: [.init("X-API-Key")!: "dev-bypass"]).0 == 401)

            let now = Date().timeIntervalSince1970
            let valid = TestJWT.hs256(["sub": "42", "email": "ada@example.com", "exp": .double(now + 3600)], secret: Self.secret)
            #expect(try await api.post("/tribunal", claim, headers: [.authorization: "Bearer \(valid)"]).0 == 200)

            let expired = TestJWT.hs256(["sub": "42", "exp": .double(now - 600)], secret: Self.secret)
            let expiredAnswer = try await api.post("/tribunal", claim, headers: [.authorization: "Bearer \(expired)"])
            #expect(expiredAnswer.0 == 401)
            #expect(detail(expiredAnswer).contains("expired"))
            // Within the allowed clock skew (60 s) an expiry just passed still counts.
            let justExpired = TestJWT.hs256(["sub": "42", "exp": .double(now - 20)], secret: Self.secret)
            #expect(try await api.post("/tribunal", claim, headers: [.authorization: "Bearer \(justExpired)"]).0 == 200)

            let forged = TestJWT.hs256(["sub": "42", "exp": .double(now + 3600)], secret: "another-secret-of-at-least-32-chars!!")
            let forgedAnswer = try await api.post("/tribunal", claim, headers: [.authorization: "Bearer \(forged)"])
            #expect(forgedAnswer.0 == 401)
            #expect(detail(forgedAnswer).contains("signature"))

            let unsigned =
                TestJWT.base64URL(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + TestJWT.base64URL(Array(#"{"sub":"42","exp":9999999999}"#.utf8)) + "."
            #expect(try await api.post("/tribunal", claim, headers: [.authorization: "Bearer \(unsigned)"]).0 == 401)

            // jwt.io's published HS256 example: its signature checks out with its secret, and it
            // is still refused, because it has no expiry.
            let published =
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
            #expect(TestJWT.verifies(published, secret: "your-256-bit-secret"))
            let noExpiry = try await api.post("/tribunal", claim, headers: [.authorization: "Bearer \(published)"])
            #expect(detail(noExpiry).contains("signature"), "signed with another secret than this server's")

            // A bad token with a good key: the key decides, as on the gateway.
            #expect(
                try await api.post("/tribunal", claim, headers: [.authorization: "Bearer \(expired)", .init("X-API-Key")!: Self.key]).0 == 200)

            // Neither keys nor tokens nor prompts reach the log.
            for secret in [Self.key, valid, expired, "Water is wet"] {
                #expect(!api.logs.text.contains(secret))
            }
        }
    }

    @Test func theJWTVectorWithItsOwnSecretFailsOnlyForItsMissingExpiry() async throws {
        try await withAPI(configure: { $0.jwtSecret = "your-256-bit-secret" }) { api in
            let published =
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
            let answer = try await api.post("/tribunal", #"{"prompt": "x y z", "k": 2}"#, headers: [.authorization: "Bearer \(published)"])
            #expect(answer.0 == 401)
            #expect(answer.1?["detail"] == "Invalid bearer token: the bearer token has no expiry (exp)")
        }
    }

    /// Issue 28, point 5: jwt-kit checks the signature; each claim that is there must be what it
    /// says, and a refusal is a 401 saying which.
    /// Each claim's limits, at their edges, are BearerTokenTests' (RheaAPITests): here, that a
    /// refusal of each kind reaches the client as a 401 naming its reason.
    @Test func aRefusedBearerTokenIsA401NamingTheReason() async throws {
        try await withAPI { api in
            let soon = JSONValue.double(Date().timeIntervalSince1970 + 3600)
            let refused: [(String, String)] = [
                (TestJWT.hs256(["sub": "42", "exp": soon, "nbf": "0"], secret: Self.secret), "the bearer token's nbf must be a number (seconds since 1970)"),
                (TestJWT.hs256(["sub": "42"], secret: Self.secret), "the bearer token has no expiry (exp)"),
                (TestJWT.hs256(["sub": "42", "exp": -1e308], secret: Self.secret), "the bearer token has expired; log in again for a fresh one"),
                (TestJWT.hs256(["sub": "42", "exp": soon, "nbf": 1e308], secret: Self.secret), "the bearer token is not valid yet"),
                (TestJWT.hs256(["exp": soon], secret: Self.secret), "the bearer token has no subject (sub)"),
                (TestJWT.hs256([1, 2], secret: Self.secret), "the bearer token's claims are not a JSON object"),
                (
                    TestJWT.hs256(["sub": "42", "exp": soon], secret: Self.secret, header: ["alg": "HS512", "typ": "JWT"]),
                    "the bearer token must be signed with HS256"
                ),
                (String(repeating: "x", count: 20_000), "the bearer token is not a JWT (three base64url parts)"),
            ]
            for (token, reason) in refused {
                let answer = try await api.get("/models", headers: [.authorization: "Bearer \(token)"])
                #expect(answer.0 == 401, "\(reason)")
                #expect(answer.1?["detail"] == .string("Invalid bearer token: " + reason), "\(answer.1 ?? .null)")
            }
            let accepted = TestJWT.hs256(["sub": 42, "exp": soon], secret: Self.secret)
            #expect(try await api.get("/models", headers: [.authorization: "Bearer \(accepted)"]).0 == 200)
        }
    }

    @Test func theLongestLifetimeIsASetting() async throws {
        try await withAPI(configure: { $0.maxTokenLifetime = .seconds(3600) }) { api in
            let now = Date().timeIntervalSince1970
            let day = TestJWT.hs256(["sub": "42", "exp": .double(now + 86_400)], secret: Self.secret)
            let dayAnswer = try await api.get("/models", headers: [.authorization: "Bearer \(day)"])
            #expect(dayAnswer.0 == 401)
            #expect(
                dayAnswer.1?["detail"]
                    == "Invalid bearer token: the bearer token's expiry (exp) is more than 3600 seconds ahead, further than this server accepts")
            let hour = TestJWT.hs256(["sub": "42", "exp": .double(now + 3000)], secret: Self.secret)
            #expect(try await api.get("/models", headers: [.authorization: "Bearer \(hour)"]).0 == 200)
        }
    }

    @Test func devBypassWorksOnlyInDevelopmentMode() async throws {
        try await withAPI(configure: { $0.developmentMode = true }) { api in
            let (status, _, _) = try await api.post("/dialog", #"{"text": "hi there"}"#, headers: [.init("X-API-Key")!: "dev-bypass"])
            #expect(status == 200)
        }
    }

    // MARK: rate limit

    @Test func overTheLimitIs429WithRetryAfterPerCaller() async throws {
        try await withAPI(configure: { $0.perMinute = 2 }) { api in
            let body = #"{"text": "hello", "action": "grammar"}"#
            #expect(try await api.post("/keyboard/quick", body).0 == 200)
            #expect(try await api.post("/keyboard/quick", body).0 == 200)
            let (status, answer, headers) = try await api.post("/keyboard/quick", body)
            #expect(status == 429)
            #expect(answer?["detail"] == "Rate limit (2/min) exceeded")
            let retryAfter = try #require(headers[.retryAfter].flatMap { Int($0) })
            #expect((1...60).contains(retryAfter))
            // Another caller has its own bucket.
            let token = TestJWT.hs256(["sub": "7", "exp": .double(Date().timeIntervalSince1970 + 600)], secret: Self.secret)
            #expect(try await api.post("/keyboard/quick", body, headers: [.authorization: "Bearer \(token)"]).0 == 200)
            // Refused calls cost the backend nothing.
            #expect(api.models[0].requestCount() == 3)
        }
    }

    @Test func overTheDailyLimitSaysSo() async throws {
        try await withAPI(configure: { $0.perDay = 1 }) { api in
            #expect(try await api.post("/dialog", #"{"text": "one"}"#).0 == 200)
            let (status, answer, headers) = try await api.post("/dialog", #"{"text": "two"}"#)
            #expect(status == 429)
            #expect(answer?["detail"] == "Daily limit (1 calls) exceeded")
            #expect((headers[.retryAfter].flatMap { Int($0) } ?? 0) > 3600)
        }
    }

    // MARK: failures

    @Test func aBackendFailureIsAnHTTPErrorWithAnIDNotA200() async throws {
        try await withAPI(persona: .fail(status: 500, message: "upstream exploded at http://10.1.2.3/v1")) { api in
            let (status, body, _) = try await api.post("/keyboard/quick", #"{"text": "hello", "action": "grammar"}"#)
            #expect(status == 502)
            let detail = try #require(body?["detail"]?.stringValue)
            #expect(!detail.hasPrefix("Error:"))
            #expect(!detail.contains("10.1.2.3") && !detail.contains("127.0.0.1") && !detail.contains("exploded"))
            // Advice in the API's terms: a client has fields, not a chat command's flags.
            #expect(detail.contains("the request's `tier` field") && !detail.contains("--"), "\(detail)")
            let id = try #require(detail.firstMatch(of: /error id ([0-9A-Z]{4}-[0-9A-Z]{2})/)?.1)
            #expect(api.logs.text.contains("error id \(id)"), "the details wait in the log under the same id")

            let (tribunalStatus, _, _) = try await api.post("/tribunal", #"{"prompt": "Water is wet", "k": 3}"#)
            #expect(tribunalStatus == 502)
        }
    }

}
