import Foundation
public import Hummingbird
public import Logging
import NIOCore
public import RelayCore
public import RelayPipeline
import RelayPlatform

/// The Rhea Tribunal API served by the relay (issue 13; docs/rhea-api.md): `POST /keyboard/quick`,
/// `POST /dialog`, `POST /tribunal`, `GET /health`, `GET /models`, with the gateway's request and
/// response shapes (the table in docs/rhea-api.md), backed by the relay's own backend.
///
/// Differences from the gateway, on purpose (docs/rhea-api.md): every POST needs a
/// key or token and counts against the caller's rate limit (the gateway leaves quick and dialog
/// open); a 429 carries `Retry-After`; a backend failure is an HTTP error (502/503/504 with
/// `{"detail"}` and an error id), not a 200 whose text starts with `Error:`.
public struct RheaAPIRoutes: Sendable {
    let tribunal: any Tribunal
    let models: [ServedModel]
    let authenticator: APIAuthenticator
    let limiter: any APICallLimiter
    let failures: FailureReporting
    let clock: any RelayClock
    /// Names the backend in `analysis_method` (`council`, `rhea`).
    let backendName: String
    /// Where a consensus asked through the API is recorded (the fact-check ledger), if anywhere.
    let record: (@Sendable (LedgerEntry) async -> Void)?

    /// The ledger's team for what API callers ask: they belong to no chat team.
    public static let ledgerTeam = "rhea-api"

    public init(
        settings: RheaAPISettings, tribunal: any Tribunal, models: [ServedModel], backendName: String, clock: any RelayClock,
        failures: FailureReporting, record: (@Sendable (LedgerEntry) async -> Void)? = nil, sharedCounts: (any CallCountStore)? = nil,
        logger: Logger = Logger(label: "rhea-relay.api")
    ) {
        self.record = record
        self.tribunal = tribunal
        self.models = models
        self.backendName = backendName
        self.authenticator = APIAuthenticator(settings)
        // Replicas of a shared store count each key's calls together; one process in memory.
        self.limiter =
            sharedCounts.map { SharedAPIRateLimiter(store: $0, perMinute: settings.perMinute, perDay: settings.perDay, logger: logger) }
            ?? APIRateLimiter(perMinute: settings.perMinute, perDay: settings.perDay)
        self.clock = clock
        self.failures = failures
    }

    /// Request bodies: text ≤ 5 000 and prompt ≤ 10 000 characters, each up to 4 bytes and JSON
    /// escapes; 128 KiB holds the largest valid request.
    static let bodyLimit = 128 * 1024

    public func add(to router: Router<some RequestContext>) {
        router.get("health") { _, _ in json(.ok, health) }
        router.get("models") { request, _ in
            if case .failure(let refused) = await authenticator.caller(request.headers, now: clock.now) { return unauthorized(refused) }
            return json(.ok, modelsBody)
        }
        router.post("keyboard/quick") { request, _ in
            await handle(request, call: "quick") { body, caller throws(Outcome) in try await quick(body, caller: caller) }
        }
        router.post("dialog") { request, _ in
            await handle(request, call: "dialog") { body, caller throws(Outcome) in try await dialog(body, caller: caller) }
        }
        router.post("tribunal") { request, _ in
            await handle(request, call: "tribunal") { body, caller throws(Outcome) in try await tribunal(body, caller: caller) }
        }
    }

    /// Auth, then the rate limit, then the body: a caller without a key costs a header check.
    private func handle(
        _ request: Request, call: String, _ run: (RequestValidation, String) async throws(Outcome) -> JSONValue
    ) async -> Response {
        let caller: String
        switch await authenticator.caller(request.headers, now: clock.now) {
        case .success(let accepted): caller = accepted
        case .failure(let refused): return unauthorized(refused)
        }
        switch await limiter.admit(caller, now: clock.now) {
        case .allowed: break
        case .refused(let detail, let retryAfter):
            var response = json(.tooManyRequests, ["detail": .string(detail)])
            response.headers[.retryAfter] = String(retryAfter)
            return response
        case .unavailable(let retryAfter):
            var response = json(.serviceUnavailable, ["detail": "The rate limit could not be checked (the store did not answer). Try again shortly."])
            response.headers[.retryAfter] = String(retryAfter)
            return response
        }
        var request = request
        let bytes: [UInt8]
        do {
            bytes = Array(buffer: try await request.collectBody(limitedTo: Self.bodyLimit))
        } catch let error as RequestBodyTooLarge {
            var response = json(.contentTooLarge, ["detail": .string(error.description)])
            response.headers[.connection] = "close"
            return response
        } catch {
            return json(.badRequest, ["detail": "The request body could not be read."])
        }
        let (validation, errors) = RequestValidation.reading(bytes)
        guard let validation else { return json(.unprocessableContent, ["detail": .array(errors)]) }
        do throws(Outcome) {
            return json(.ok, try await run(validation, caller))
        } catch {
            switch error {
            case .invalid(let errors): return json(.unprocessableContent, ["detail": .array(errors)])
            case .failed(let failure): return backendFailure(failures.report(failure, call: call, source: "rhea-api", caller: caller))
            }
        }
    }

    enum Outcome: Error {
        case invalid([JSONValue])
        case failed(TribunalError)
    }

    // MARK: POST /keyboard/quick

    private func quick(_ body: RequestValidation, caller: String) async throws(Outcome) -> JSONValue {
        var body = body
        let text = body.string("text", minLength: 1, maxLength: 5000)
        let action = body.string("action", default: "translate")
        let targetLang = body.string("target_lang", default: "en")
        let style = body.string("style", default: "")
        // Not in the gateway's contract (always cheap there): the relay's own client sends it.
        let tier = body.string("tier", default: "cheap")
        guard body.errors.isEmpty else { throw .invalid(body.errors) }
        let (quickAction, input) = Self.quickAction(action, targetLang: targetLang, style: style, text: text)
        let result: QuickResult
        do throws(TribunalError) {
            result = try await tribunal.quick(QuickRequest(action: quickAction, text: input, tier: Self.tier(tier)))
        } catch {
            throw .failed(error)
        }
        return [
            "text": .string(result.text), "model": .string(result.model ?? ""), "elapsed_s": .double(Self.seconds(result.elapsed)),
            "action": .string(action),
        ]
    }

    /// The gateway's actions (contract §2.1): an unknown action, or a rewrite style outside the
    /// relay's six, becomes a free-form prompt rather than an error, as on the gateway.
    static func quickAction(_ action: String, targetLang: String, style: String, text: String) -> (QuickAction, String) {
        switch action.lowercased() {
        case "translate":
            let wanted = targetLang.trimmingCharacters(in: " \t")
            let language = wanted.isEmpty ? Language.lookup("en") : Language.lookup(wanted)
            return (.translate(to: language ?? Language(code: wanted, name: wanted)), text)
        case "rewrite":
            let wanted = style.trimmingCharacters(in: " \t").lowercased()
            if wanted.isEmpty { return (.rewrite(style: nil), text) }
            if let known = RewriteStyle(rawValue: wanted) { return (.rewrite(style: known), text) }
            return (.freeform, "Rewrite the text below in this style: \(style). Answer with the rewritten text only.\n\n\(text)")
        case "grammar": return (.grammar, text)
        case "summarize": return (.summarize, text)
        case "explain": return (.explain, text)
        case "extract": return (.extract, text)
        default: return (.freeform, text)
        }
    }

    // MARK: POST /dialog

    private func dialog(_ body: RequestValidation, caller: String) async throws(Outcome) -> JSONValue {
        var body = body
        let text = body.string("text", minLength: 1, maxLength: 5000)
        _ = body.string("sender", default: "human")
        guard body.errors.isEmpty else { throw .invalid(body.errors) }
        let result: ConsensusResult
        do throws(TribunalError) {
            result = try await tribunal.consensus(ConsensusRequest(claim: text, k: 2, tier: .cheap))
        } catch {
            throw .failed(error)
        }
        await recordConsensus(result, claim: text, caller: caller)
        // As on the gateway: the score is the share of the two models that answered.
        let asked = max(result.asked, 1)
        return [
            "reply": .string(result.answer), "agreement_score": .double(Double(result.answered) / Double(asked)),
            "models_responded": .int(result.answered), "elapsed_s": .double(Self.seconds(result.elapsed)),
            "ts": .string(Self.timestamp(clock.now)),
        ]
    }

    // MARK: POST /tribunal

    private func tribunal(_ body: RequestValidation, caller: String) async throws(Outcome) -> JSONValue {
        var body = body
        let prompt = body.string("prompt", minLength: 1, maxLength: 10_000)
        let k = body.int("k", default: 5, in: 2...10)
        let tier = body.string("tier", default: "cheap")
        let mode = body.string("mode", default: "local")
        _ = body.string("system", default: "", maxLength: 2000)
        guard body.errors.isEmpty else { throw .invalid(body.errors) }
        let result: ConsensusResult
        do throws(TribunalError) {
            result = try await tribunal.consensus(ConsensusRequest(claim: prompt, k: k, tier: Self.tier(tier)))
        } catch {
            throw .failed(error)
        }
        await recordConsensus(result, claim: prompt, caller: caller)
        return TribunalAnswer.body(result, prompt: prompt, k: k, mode: mode, backend: backendName)
    }

    /// Records an API consensus in the ledger under ``ledgerTeam``, the caller (`key:…` or
    /// `user:…`, never the key itself) as who asked.
    private func recordConsensus(_ result: ConsensusResult, claim: String, caller: String) async {
        guard let record else { return }
        await record(
            LedgerEntry(
                result, claim: claim, team: Self.ledgerTeam, user: caller, channel: "api", origin: .api, keepTexts: true,
                createdAt: clock.now))
    }

    /// The gateway's tier names and ours; an unknown name is `cheap`, as on the gateway.
    static func tier(_ name: String) -> Tier {
        switch name.lowercased() {
        case "mid", "balanced": .mid
        case "frontier", "expensive", "premium", "max", "reasoning", "science": .frontier
        default: .cheap
        }
    }

    // MARK: GET /health, GET /models

    private var health: JSONValue {
        [
            "status": "ok", "providers_available": .int(models.count), "providers_total": .int(models.count), "total_models": .int(models.count),
            "execution_profile": "relay", "analyzer_version": .string("rhea-relay-\(backendName)"), "profile_mode": "relay",
        ]
    }

    /// Each model the backend can use, one "provider" each; never a base URL or a key variable.
    private var modelsBody: JSONValue {
        var providers: [String: JSONValue] = [:]
        for model in models {
            providers[model.name] = [
                "display_name": .string(model.name), "available": true, "api_key_env": "", "key_set": true,
                "models": [.string(model.model)], "model_count": 1, "base_url": .null, "tier": .string(model.tier.rawValue),
            ]
        }
        return [
            "providers": .object(providers),
            "summary": ["total_providers": .int(models.count), "available_providers": .int(models.count), "total_models": .int(models.count)],
        ]
    }

    // MARK: answers

    private func unauthorized(_ refused: APIAuthenticator.Refused) -> Response {
        var response = json(.unauthorized, ["detail": .string(refused.detail)])
        response.headers[.wwwAuthenticate] = "Bearer"
        return response
    }

    /// A backend failure in the user's terms with its error id; the details are in the log line
    /// with the same id. The status says whose fault it is: the relay's backend, not the caller.
    private func backendFailure(_ error: TribunalError) -> Response {
        let underlying: TribunalError
        if case .reported(let report) = error { underlying = report.error } else { underlying = error }
        let status: HTTPResponse.Status
        var retryAfter: Int?
        switch underlying {
        case .timedOut: status = .gatewayTimeout
        case .rateLimited(_, let seconds):
            status = .serviceUnavailable
            retryAfter = max(1, min(seconds, 3600))
        case .notConfigured: status = .serviceUnavailable
        case .rejected: status = .badRequest
        default: status = .badGateway
        }
        var response = json(status, ["detail": .string(error.apiMessage)])
        if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }

    private func json(_ status: HTTPResponse.Status, _ value: JSONValue) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.serialized() ?? Array(#"{"detail":"unencodable answer"}"#.utf8))))
    }

    static func seconds(_ duration: Duration) -> Double {
        (duration.seconds * 100).rounded() / 100
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

/// A model the backend can use, as `GET /models` lists it.
public struct ServedModel: Sendable, Hashable {
    public var name: String
    public var model: String
    public var tier: Tier

    public init(name: String, model: String, tier: Tier) {
        self.name = name
        self.model = model
        self.tier = tier
    }
}

/// The served API's decoders of untrusted input, run as `serve` runs them, for `rhea-fuzz`.
public enum RheaAPIInputs {
    /// Reads `body` as the route's request (`quick`, `dialog`, `tribunal`); true when it is valid.
    public static func request(_ body: [UInt8], route: String) -> Bool {
        let (reader, _) = RequestValidation.reading(body)
        guard var reader else { return false }
        switch route {
        case "quick":
            _ = reader.string("text", minLength: 1, maxLength: 5000)
            let action = reader.string("action", default: "translate")
            let targetLang = reader.string("target_lang", default: "en")
            let style = reader.string("style", default: "")
            _ = RheaAPIRoutes.tier(reader.string("tier", default: "cheap"))
            _ = RheaAPIRoutes.quickAction(action, targetLang: targetLang, style: style, text: "")
        case "dialog":
            _ = reader.string("text", minLength: 1, maxLength: 5000)
            _ = reader.string("sender", default: "human")
        default:
            _ = reader.string("prompt", minLength: 1, maxLength: 10_000)
            _ = reader.int("k", default: 5, in: 2...10)
            _ = RheaAPIRoutes.tier(reader.string("tier", default: "cheap"))
            _ = reader.string("mode", default: "local")
            _ = reader.string("system", default: "", maxLength: 2000)
        }
        // Every error must serialise: the 422 body is built from the input itself.
        return reader.errors.isEmpty && JSONValue.object(["detail": .array(reader.errors)]).serialized() != nil
    }

    /// Reads `claims` as the claims of a bearer token whose signature holds, as `serve` reads them
    /// (at a fixed clock, with the default slack and lifetime); true when they are accepted. The
    /// signature itself is jwt-kit's to check.
    public static func bearerClaims(_ claims: [UInt8]) -> Bool {
        guard let decoded = try? JSONDecoder().decode(BearerClaims.self, from: Data(claims)) else { return false }
        let defaults = RheaAPISettings()
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        if case .success = decoded.subject(now: now, clockSkew: defaults.clockSkew, maxLifetime: defaults.maxTokenLifetime) { return true }
        return false
    }
}
