public import RelayCore

/// Everything the Rhea Tribunal client needs to know, as plain values.
///
/// The caller reads the environment and the config file (`TRIBUNAL_URL`, `TRIBUNAL_TOKEN`,
/// `TRIBUNAL_API_KEY`); this type only holds the results, so tests build it directly.
public struct RheaTribunalConfiguration: Sendable, Hashable {
    /// The production gateway every Rhea client uses.
    public static let defaultBaseURL = "https://rhea-tribunal.fly.dev"

    /// Base URL of the gateway, without a trailing slash (one is stripped if given).
    public var baseURL: String
    /// A JWT from `/auth/login`, sent as `Authorization: Bearer …`. Takes precedence over `apiKey`.
    public var token: String?
    /// A customer (`rk_…`) or static key, sent as `X-API-Key`.
    public var apiKey: String?
    /// Send `X-API-Key: dev-bypass` when neither a token nor a key is set.
    ///
    /// Only local (non-Fly) servers accept it, so it must be switched on explicitly.
    public var developmentMode: Bool
    /// Per-request deadlines, by endpoint.
    public var timeouts: Timeouts
    /// How transport failures and 5xx answers are retried.
    public var retry: RetryPolicy
    /// How long to hold calls back after a 429 when the server names no longer wait.
    ///
    /// The gateway sends no `Retry-After`, and its window is a minute, so less would just
    /// spend the next requests on more 429s.
    public var rateLimitCooldown: Duration

    /// Creates a configuration; every argument has the production default.
    public init(
        baseURL: String = RheaTribunalConfiguration.defaultBaseURL,
        token: String? = nil,
        apiKey: String? = nil,
        developmentMode: Bool = false,
        timeouts: Timeouts = Timeouts(),
        retry: RetryPolicy = RetryPolicy(),
        rateLimitCooldown: Duration = .seconds(60)
    ) {
        self.baseURL = baseURL
        self.token = token
        self.apiKey = apiKey
        self.developmentMode = developmentMode
        self.timeouts = timeouts
        self.retry = retry
        self.rateLimitCooldown = rateLimitCooldown
    }

    /// Whether `/tribunal` can be called: it rejects anonymous requests, `/dialog` does not.
    public var hasCredentials: Bool {
        token.isNonEmpty || apiKey.isNonEmpty || developmentMode
    }

    /// The base URL with any trailing slashes removed, ready for appending a path.
    var normalizedBaseURL: String {
        var url = baseURL.trimmingWhitespace
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// Per-endpoint deadlines.
    public struct Timeouts: Sendable, Hashable {
        /// `/keyboard/quick`: one cheap model (the iOS keyboard uses 15 s too).
        public var quick: Duration
        /// `/dialog`: two cheap models in parallel.
        public var dialog: Duration
        /// `/tribunal`: the server waits for the slowest of k models, up to 60 s each.
        public var tribunal: Duration
        /// `/health`: no model is called, so a slow answer means trouble.
        public var health: Duration

        /// Creates timeouts; the defaults follow the contract's advice.
        public init(quick: Duration = .seconds(15), dialog: Duration = .seconds(30), tribunal: Duration = .seconds(90), health: Duration = .seconds(5)) {
            self.quick = quick
            self.dialog = dialog
            self.tribunal = tribunal
            self.health = health
        }
    }
}
