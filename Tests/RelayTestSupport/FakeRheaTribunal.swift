import Hummingbird
public import Logging
import NIOCore
public import RelayCore

/// A fake Rhea Tribunal gateway: a real HTTP server on 127.0.0.1 speaking the contract's wire
/// format (the routes and shapes in docs/rhea-api.md), scriptable while it runs.
///
/// ```swift
/// let fake = try await FakeRheaTribunal.start()
/// defer { Task { await fake.stop() } }          // or use `withFakeRheaTribunal { … }`
/// await fake.setAgreement(0.4, forTier: .mid)
/// await fake.failNext(path: FakeRheaTribunal.tribunalPath, status: 503)
/// // point a client at fake.url, then:
/// let sent = await fake.requests(path: FakeRheaTribunal.tribunalPath)
/// ```
///
/// Routes: `POST /keyboard/quick`, `POST /dialog`, `POST /tribunal` (needs credentials),
/// `GET /health`; anything else is 404 `{"detail":"Not Found"}`. Every request is recorded.
///
/// Deterministic answers:
/// - quick: `text` = `"[<action>:<arg>] <text>"` for translate (arg = `target_lang`, empty →
///   `en`) and rewrite (arg = `style`, empty → `clearer`), `"[<action>] <text>"` for grammar,
///   summarize, explain and freeform; an unknown action answers as `[freeform]`, as the
///   server does. `model` = `"fake-mini"`.
/// - dialog: `reply` = `"[dialog] <text>"`, `agreement_score` 1.0, `models_responded` 2
///   (see `setDialogModelsResponded(_:)` for 1 → "Insufficient responses (1/2 valid).",
///   0 → "No response available.").
/// - tribunal: the first k of `openai/fake-a`, `deepseek/fake-b`, `gemini/fake-c`, … answer
///   `"Yes, this holds. <model> agrees with: <prompt>"`, stance affirmative; when the
///   agreement is below 0.7 the last answering model says
///   `"It depends on the context. <model> has reservations about: <prompt>"`, stance qualified,
///   with divergence point `"[<provider/model> only] It depends on the context."`. `consensus`
///   starts `"Strong consensus across 3 models (agreement: 82%)."`. Agreement defaults to 0.82
///   (see the `setAgreement` methods); extra unknown fields are included on purpose.
public final class FakeRheaTribunal: Sendable {
    /// `POST /keyboard/quick`.
    public static let quickPath = "/keyboard/quick"
    /// `POST /dialog`.
    public static let dialogPath = "/dialog"
    /// `POST /tribunal`.
    public static let tribunalPath = "/tribunal"
    /// `GET /health`.
    public static let healthPath = "/health"
    /// The JWT accepted by default as `Authorization: Bearer <token>`.
    public static let defaultToken = "fake-jwt.eyJzdWIiOiI0MiJ9.signature"
    /// The key accepted by default as `X-API-Key`.
    public static let defaultAPIKey = "rk_fake_0123456789abcdef"

    /// `http://127.0.0.1:<port>`, no trailing slash.
    public let url: String
    /// The bound port.
    public let port: Int
    let state: FakeRheaTribunalState
    private let server: FakeServerHandle
    private let gate: FakeGate

    private init(port: Int, state: FakeRheaTribunalState, server: FakeServerHandle, gate: FakeGate) {
        self.url = "http://127.0.0.1:\(port)"
        self.port = port
        self.state = state
        self.server = server
        self.gate = gate
    }

    /// Starts a fake on an ephemeral loopback port and returns once it accepts connections.
    ///
    /// - Parameters:
    ///   - validToken: the Bearer token `/tribunal` accepts (nil: none).
    ///   - validAPIKey: the `X-API-Key` `/tribunal` accepts (nil: none).
    ///   - allowDevBypass: whether `X-API-Key: dev-bypass` is accepted (as off Fly).
    ///   - requireAuth: false lets `/tribunal` answer anonymous requests too.
    ///   - logger: the server's logger; silent by default.
    public static func start(
        validToken: String? = FakeRheaTribunal.defaultToken,
        validAPIKey: String? = FakeRheaTribunal.defaultAPIKey,
        allowDevBypass: Bool = true,
        requireAuth: Bool = true,
        logger: Logger? = nil
    ) async throws -> FakeRheaTribunal {
        let state = FakeRheaTribunalState(
            auth: .init(
                validToken: validToken, validAPIKey: validAPIKey, allowDevBypass: allowDevBypass,
                requireAuth: requireAuth))
        let stopFlag = FakeStopFlag()
        let gate = FakeGate()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let recorded = try await RecordedRequest.read(request)
            let reply = await state.handle(recorded)
            state.arrivals.append(recorded, key: recorded.path)
            await gate.pass(recorded.path)
            if reply.delay > 0 {
                try await stopFlag.delay(reply.delay)
            }
            var responseHeaders = HTTPFields()
            responseHeaders[.contentType] = reply.contentType
            if let retryAfter = reply.retryAfter {
                responseHeaders[.retryAfter] = String(retryAfter)
            }
            return Response(
                status: .init(code: reply.status),
                headers: responseHeaders,
                body: .init(byteBuffer: ByteBuffer(bytes: reply.body)))
        }

        let (server, port) = try await FakeServerHandle.start(
            responder: responder, stopFlag: stopFlag, logger: logger ?? Logger(label: "FakeRheaTribunal", factory: { _ in SwiftLogNoOpLogHandler() }))
        return FakeRheaTribunal(port: port, state: state, server: server, gate: gate)
    }

    /// Stops the server and waits until the port is closed; in-flight slow answers are cut off.
    public func stop() async {
        gate.releaseAll()
        await server.stop()
    }

    // MARK: Scripting

    /// The next `count` requests to `path` answer `status` with `{"detail": …}`.
    ///
    /// `detail` nil uses the contract's text: 401 "Invalid or missing API key. Sign up at
    /// /auth/signup", 402 "Insufficient credits. Need 3 for tribunal, have 0. Buy credits at
    /// /billing/credits/buy", 429 "Rate limit (30/min) exceeded" (no Retry-After); 500 without
    /// a detail is plain text "Internal Server Error".
    public func failNext(path: String, status: Int, count: Int = 1, detail: String? = nil) async {
        await state.enqueue(.status(status, detail: detail), path: path, count: count)
    }

    /// The next `count` requests to `path` report a model-provider failure the gateway's way
    /// (200 with `Error: …`, or `/tribunal` with every model erroring).
    public func failProviderNext(path: String, count: Int = 1) async {
        await state.enqueue(.providerFailure, path: path, count: count)
    }

    /// The next `count` requests to `path` get a 200 whose body is not valid JSON.
    public func sendMalformedNext(path: String, count: Int = 1) async {
        await state.enqueue(.malformedJSON, path: path, count: count)
    }

    /// Queues any `FakeFailure` for the next `count` requests to `path`.
    public func script(_ failure: FakeFailure, path: String, count: Int = 1) async {
        await state.enqueue(failure, path: path, count: count)
    }

    /// Drops every queued failure.
    public func clearFailures() async {
        await state.clearFailures()
    }

    /// Every answer on `path` (errors included) waits `seconds` first; 0 removes the delay.
    /// Answers to `path` are held (the request is recorded at once) until `release(path:)`.
    public func hold(path: String) {
        gate.hold(path)
    }

    /// Lets the held answers to `path` go.
    public func release(path: String) {
        gate.release(path)
    }

    public func setDelay(path: String, seconds: Double) async {
        await state.setDelay(path: path, seconds: seconds)
    }

    /// `/tribunal` agreement when no prompt rule matches; 0.82 unless set.
    public func setDefaultAgreement(_ score: Double) async {
        await state.setDefaultAgreement(score)
    }

    /// `/tribunal` agreement for requests of `tier` (mapped as the client does: cheap → "cheap",
    /// mid → "balanced", frontier → "expensive").
    public func setAgreement(_ score: Double, forTier tier: Tier) async {
        await state.setAgreement(score, forWireTier: Self.wireTier(tier))
    }

    /// `/tribunal` agreement for requests whose `tier` field is exactly `wireTier`.
    public func setAgreement(_ score: Double, forWireTier wireTier: String) async {
        await state.setAgreement(score, forWireTier: wireTier)
    }

    /// `/tribunal` agreement for prompts containing `substring`; beats tier and default.
    public func setAgreement(_ score: Double, whenPromptContains substring: String) async {
        await state.setAgreement(score, whenPromptContains: substring)
    }

    /// `/tribunal` agreement from a function of (prompt, wire tier); nil falls through to the
    /// tier table and the default. Prompt-substring rules still come first.
    public func setAgreementRule(_ rule: @escaping @Sendable (_ prompt: String, _ wireTier: String) -> Double?) async {
        await state.setAgreementRule(rule)
    }

    /// `/keyboard/quick` answers with `answer(text)` instead of its tagged echo (nil: the echo),
    /// e.g. a model that writes far more than it was given.
    public func setQuickAnswer(_ answer: @escaping @Sendable (_ text: String) -> String?) async {
        await state.setQuickAnswer(answer)
    }

    /// How many of the k `/tribunal` models fail (the last ones). 1 left answering gives the
    /// server's "Insufficient responses" with scores 0; all failing gives `models_responded` 0.
    public func setFailingModels(_ count: Int) async {
        await state.setFailingModels(count)
    }

    /// The stance the agreeing `/tribunal` models take: `affirmative` unless set (`negative`: they
    /// agree the claim is false).
    public func setStance(_ label: String) async {
        await state.setStance(label)
    }

    /// How many of `/dialog`'s two models answer (0…2); 2 unless set.
    public func setDialogModelsResponded(_ count: Int) async {
        await state.setDialogModelsResponded(count)
    }

    /// Changes which credentials `/tribunal` accepts.
    public func setAuth(
        validToken: String?, validAPIKey: String?, allowDevBypass: Bool = true, requireAuth: Bool = true
    ) async {
        await state.setAuth(
            .init(
                validToken: validToken, validAPIKey: validAPIKey, allowDevBypass: allowDevBypass,
                requireAuth: requireAuth))
    }

    /// What `/health` reports.
    public func setHealth(status: String = "ok", providersAvailable: Int = 4, providersTotal: Int = 6) async {
        await state.setHealth(status: status, providersAvailable: providersAvailable, providersTotal: providersTotal)
    }

    // MARK: Inspection

    /// Requests received, oldest first; only those to `path` when given.
    public func requests(path: String? = nil) async -> [RecordedRequest] {
        let all = await state.requests
        guard let path else { return all }
        return all.filter { $0.path == path }
    }

    /// The next request to `path` (in arrival order, each handed out once), waiting for it to
    /// arrive; nil only if none comes within a generous safety limit.
    public func next(path: String) async -> RecordedRequest? {
        await state.arrivals.next(path)
    }

    /// How many requests reached `path` (all paths when nil).
    public func requestCount(path: String? = nil) async -> Int {
        await requests(path: path).count
    }

    /// The latest request to `path`, if any.
    public func lastRequest(path: String) async -> RecordedRequest? {
        await requests(path: path).last
    }

    /// Forgets the recorded requests (scripts stay).
    public func clearRequests() async {
        await state.clearRequests()
    }

    static func wireTier(_ tier: Tier) -> String {
        switch tier {
        case .cheap: "cheap"
        case .mid: "balanced"
        case .frontier: "expensive"
        }
    }
}

/// Starts a `FakeRheaTribunal`, runs `body` with it and stops it, also when `body` throws.
public func withFakeRheaTribunal<T>(
    validToken: String? = FakeRheaTribunal.defaultToken,
    validAPIKey: String? = FakeRheaTribunal.defaultAPIKey,
    allowDevBypass: Bool = true,
    requireAuth: Bool = true,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (FakeRheaTribunal) async throws -> T
) async throws -> T {
    let fake = try await FakeRheaTribunal.start(
        validToken: validToken, validAPIKey: validAPIKey, allowDevBypass: allowDevBypass, requireAuth: requireAuth)
    do {
        let result = try await body(fake)
        await fake.stop()
        return result
    } catch {
        await fake.stop()
        throw error
    }
}

/// Why a fake server could not start.
public enum FakeServerError: Error, Sendable {
    case didNotStart(reason: String)
}
