/// The served Rhea Tribunal API (`api` section; environment `RHEA_API_*`), off unless enabled.
public struct RheaAPISettings: Sendable, CustomStringConvertible {
    /// `api.enabled` (`RHEA_API_ENABLED`): whether `serve` answers the Rhea API's routes.
    public var enabled: Bool
    /// The accepted API keys' SHA-256 digests (lowercase hex), from `api.keysFile`; never the keys.
    public var keyDigests: Set<String>
    /// The HS256 secret for `Authorization: Bearer` tokens (`RHEA_API_JWT_SECRET` or
    /// `api.jwtSecretFile`); nil: bearer tokens are not accepted.
    public var jwtSecret: String?
    /// How far a token's `exp`/`nbf` may be off from this clock (`api.clockSkew`, at most 5 min).
    public var clockSkew: Duration
    /// How far ahead a token's `exp` may be (`api.maxTokenLifetime`, default 30 days): a token
    /// made to last for ever is refused.
    public var maxTokenLifetime: Duration
    /// `api.development`: accept the key `dev-bypass`, as the gateway does off its production host.
    public var developmentMode: Bool
    /// Calls per key or token subject per minute and per 24 hours (`api.perMinute`, `api.perDay`).
    public var perMinute: Int
    public var perDay: Int

    public init(
        enabled: Bool = false, keyDigests: Set<String> = [], jwtSecret: String? = nil, clockSkew: Duration = .seconds(60),
        maxTokenLifetime: Duration = .seconds(30 * 86_400), developmentMode: Bool = false, perMinute: Int = 30, perDay: Int = 1000
    ) {
        self.enabled = enabled
        self.keyDigests = keyDigests
        self.jwtSecret = jwtSecret
        self.clockSkew = clockSkew
        self.maxTokenLifetime = maxTokenLifetime
        self.developmentMode = developmentMode
        self.perMinute = perMinute
        self.perDay = perDay
    }

    /// Counts keys and says whether a secret is set, never what they are.
    public var description: String {
        "RheaAPISettings(\(enabled ? "on" : "off"), \(keyCount), bearer tokens \(jwtSecret == nil ? "off" : "on"), "
            + "\(perMinute)/min \(perDay)/day\(developmentMode ? ", DEVELOPMENT MODE" : ""))"
    }

    /// "1 key", "3 keys".
    var keyCount: String { keyDigests.count == 1 ? "1 key" : "\(keyDigests.count) keys" }

    /// What `serve` prints at start-up about the API, whatever the log level: whether it is on, how
    /// callers get in, and — in development mode — a warning no one can miss.
    public var startupSummary: [String] {
        guard enabled else { return ["rhea api: off (set RHEA_API_ENABLED=1 and RHEA_API_KEYS_FILE to serve it)"] }
        var lines = [
            "rhea api: on (POST /keyboard/quick, /dialog, /tribunal; GET /health, /models), \(keyCount), bearer tokens \(jwtSecret == nil ? "off" : "on"), \(perMinute)/min \(perDay)/day"
        ]
        if developmentMode {
            lines.append(
                "WARNING: rhea api in DEVELOPMENT MODE: the key `dev-bypass` is accepted from anyone. Never run this on a reachable address; unset api.development (RHEA_API_DEVELOPMENT)."
            )
        }
        return lines
    }

    /// The gateway's `dev-bypass` key, accepted only in development mode.
    public static let devBypassKey = "dev-bypass"
    /// The shortest HS256 secret accepted: the gateway itself refuses to start below 32 characters.
    public static let minimumSecretLength = 32
}
