import RelayCore

/// Everything a `FakeRheaTribunal` remembers and is told, behind one actor.
actor FakeRheaTribunalState {
    /// What to send back for one request, after `delay` seconds.
    struct Reply: Sendable {
        var delay: Double = 0
        var status: Int
        var contentType = "application/json"
        /// Seconds for a `Retry-After` header; the real gateway never sends one.
        var retryAfter: Int?
        var body: [UInt8]

        init(status: Int, json: JSONValue, delay: Double = 0) {
            self.status = status
            self.body = json.encoded()
            self.delay = delay
        }

        init(status: Int, text: String, contentType: String, delay: Double = 0) {
            self.status = status
            self.body = Array(text.utf8)
            self.contentType = contentType
            self.delay = delay
        }
    }

    struct Auth: Sendable {
        var validToken: String?
        var validAPIKey: String?
        var allowDevBypass: Bool
        var requireAuth: Bool
    }

    private(set) var requests: [RecordedRequest] = []
    /// The same requests, for awaiting the next one at a path.
    nonisolated let arrivals = RequestLog<RecordedRequest>()
    var auth: Auth
    var failures: [String: [FakeFailure]] = [:]
    var delays: [String: Double] = [:]
    var defaultAgreement = 0.82
    var agreementByTier: [String: Double] = [:]
    var agreementByPrompt: [(substring: String, score: Double)] = []
    var agreementRule: (@Sendable (String, String) -> Double?)?
    /// `/keyboard/quick` answer text from the request's text; nil keeps the tagged echo.
    var quickAnswer: (@Sendable (String) -> String?)?
    var failingModels = 0
    /// The stance the agreeing models take (`stance_summary`); the dissenter stays `qualified`.
    var stance = "affirmative"
    var dialogModelsResponded = 2
    var healthStatus = "ok"
    var providersAvailable = 4
    var providersTotal = 6

    init(auth: Auth) {
        self.auth = auth
    }

    func clearRequests() { requests.removeAll() }

    func enqueue(_ failure: FakeFailure, path: String, count: Int) {
        failures[path, default: []].append(contentsOf: Array(repeating: failure, count: max(0, count)))
    }

    func setAgreement(_ score: Double, whenPromptContains substring: String) {
        agreementByPrompt.removeAll { $0.substring == substring }
        agreementByPrompt.append((substring, score))
    }

    /// Records `request` and decides the answer. Order: scripted failure, auth (`/tribunal`
    /// only), body validation, content; the path's delay applies to every outcome.
    func handle(_ request: RecordedRequest) -> Reply {
        requests.append(request)
        var reply = answer(request)
        reply.delay = delays[request.path] ?? 0
        return reply
    }

    private func answer(_ request: RecordedRequest) -> Reply {
        let routes: [String: String] = [
            FakeRheaTribunal.quickPath: "POST", FakeRheaTribunal.dialogPath: "POST",
            FakeRheaTribunal.tribunalPath: "POST", FakeRheaTribunal.healthPath: "GET",
        ]
        guard let method = routes[request.path] else {
            return Reply(status: 404, json: FakeRheaContent.detail("Not Found"))
        }
        guard method == request.method else {
            return Reply(status: 405, json: FakeRheaContent.detail("Method Not Allowed"))
        }

        var scripted: FakeFailure?
        if var queue = failures[request.path], !queue.isEmpty {
            scripted = queue.removeFirst()
            failures[request.path] = queue
        }
        switch scripted {
        case .status(let status, let detail):
            if status == 500 && detail == nil {
                return Reply(status: 500, text: "Internal Server Error", contentType: "text/plain; charset=utf-8")
            }
            if status == 422 && detail == nil {
                return Reply(status: 422, json: ["detail": [FakeRheaContent.contractValidationError]])
            }
            let text = detail ?? FakeRheaContent.defaultDetail(for: status, path: request.path)
            return Reply(status: status, json: FakeRheaContent.detail(text))
        case .rateLimitedWithRetryAfter(let seconds):
            var reply = Reply(status: 429, json: FakeRheaContent.detail(FakeRheaContent.defaultDetail(for: 429, path: "")))
            reply.retryAfter = seconds
            return reply
        case .malformedJSON:
            return Reply(status: 200, text: "{\"text\": \"unterminated", contentType: "application/json")
        case .body(let body):
            return Reply(status: 200, text: body, contentType: "application/json")
        case .providerFailure, nil:
            break
        }

        if request.path == FakeRheaTribunal.tribunalPath, let refusal = authRefusal(request) {
            return Reply(status: 401, json: FakeRheaContent.detail(refusal))
        }
        let rules: [(String, FakeRheaValidation.Rule)]? =
            switch request.path {
            case FakeRheaTribunal.quickPath: FakeRheaValidation.quick
            case FakeRheaTribunal.dialogPath: FakeRheaValidation.dialog
            case FakeRheaTribunal.tribunalPath: FakeRheaValidation.tribunal
            default: nil
            }
        if let rules {
            let errors = FakeRheaValidation.errors(in: request.body, rules: rules)
            if !errors.isEmpty {
                return Reply(status: 422, json: ["detail": .array(errors)])
            }
        }

        let body = request.body?.objectValue ?? [:]
        let providerFails = scripted == .providerFailure
        switch request.path {
        case FakeRheaTribunal.quickPath:
            var answer = providerFails ? FakeRheaContent.quickProviderFailure(body) : FakeRheaContent.quick(body)
            if !providerFails, let text = quickAnswer?(body["text"]?.stringValue ?? ""), case .object(var fields) = answer {
                fields["text"] = .string(text)
                answer = .object(fields)
            }
            return Reply(status: 200, json: answer)
        case FakeRheaTribunal.dialogPath:
            return Reply(
                status: 200,
                json: providerFails
                    ? FakeRheaContent.dialogProviderFailure()
                    : FakeRheaContent.dialog(body, modelsResponded: dialogModelsResponded))
        case FakeRheaTribunal.tribunalPath:
            let prompt = body["prompt"]?.stringValue ?? ""
            let tier = body["tier"]?.stringValue ?? "cheap"
            let k = body["k"]?.intValue ?? 5
            return Reply(
                status: 200,
                json: FakeRheaContent.tribunal(
                    prompt: prompt, k: k, tier: tier, mode: body["mode"]?.stringValue ?? "local",
                    agreement: agreement(prompt: prompt, tier: tier),
                    failing: providerFails ? k : failingModels, stance: stance))
        default:
            return Reply(
                status: 200,
                json: FakeRheaContent.health(
                    status: healthStatus, providersAvailable: providersAvailable, providersTotal: providersTotal))
        }
    }

    /// The 401 text for a `/tribunal` request, or nil when its credentials are accepted
    /// (contract §1.2: a JWT, then a known key, then `dev-bypass` where allowed).
    private func authRefusal(_ request: RecordedRequest) -> String? {
        guard auth.requireAuth else { return nil }
        if let authorization = request.header("authorization"), authorization.hasPrefix("Bearer "),
            let token = auth.validToken, String(authorization.dropFirst("Bearer ".count)) == token
        {
            return nil
        }
        // An invalid JWT is not an error by itself: it falls through to the key.
        let key = request.header("x-api-key")
        if let key, let valid = auth.validAPIKey, key == valid { return nil }
        if key == "dev-bypass", auth.allowDevBypass { return nil }
        if let key, key.hasPrefix("rk_") { return "Invalid API key" }
        return "Invalid or missing API key. Sign up at /auth/signup"
    }

    /// Prompt rules (latest set first), then the custom rule, then the tier, then the default.
    func agreement(prompt: String, tier: String) -> Double {
        if let match = agreementByPrompt.last(where: { prompt.contains($0.substring) }) {
            return match.score
        }
        if let rule = agreementRule, let score = rule(prompt, tier) { return score }
        return agreementByTier[tier] ?? defaultAgreement
    }
}

extension FakeRheaTribunalState {
    func clearFailures() { failures.removeAll() }
    func setDelay(path: String, seconds: Double) { delays[path] = seconds > 0 ? seconds : nil }
    func setDefaultAgreement(_ score: Double) { defaultAgreement = score }
    func setAgreement(_ score: Double, forWireTier tier: String) { agreementByTier[tier] = score }
    func setAgreementRule(_ rule: @escaping @Sendable (String, String) -> Double?) { agreementRule = rule }
    func setQuickAnswer(_ answer: @escaping @Sendable (String) -> String?) { quickAnswer = answer }
    func setFailingModels(_ count: Int) { failingModels = max(0, count) }
    func setStance(_ label: String) { stance = label }
    func setDialogModelsResponded(_ count: Int) { dialogModelsResponded = min(2, max(0, count)) }
    func setAuth(_ auth: Auth) { self.auth = auth }
    func setHealth(status: String, providersAvailable: Int, providersTotal: Int) {
        healthStatus = status
        self.providersAvailable = providersAvailable
        self.providersTotal = providersTotal
    }
}
