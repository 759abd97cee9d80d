public import RelayCore

/// One OpenAI-compatible model of the council, as configured.
public struct CouncilModel: Sendable, Hashable {
    /// The configured name, shown in replies ("mini", "llama-local").
    public var name: String
    /// The API base, e.g. `https://api.openai.com/v1`; requests go to `{baseURL}/chat/completions`.
    public var baseURL: String
    /// The environment variable holding the key; nil for servers without auth (llama.cpp, Ollama).
    public var apiKeyEnv: String?
    /// The key itself, resolved from `apiKeyEnv` at start-up. Never logged or shown.
    public var apiKey: String?
    /// The provider's model id (`gpt-4o-mini`).
    public var model: String
    public var tier: Tier
    /// Voting weight in the agreement formula (> 0).
    public var weight: Double
    /// Per-call timeout; nil uses the council's default.
    public var timeout: Duration?
    /// Whether an answer shown as it is written is asked for with `stream: true`; false for an
    /// endpoint that cannot stream, whose answers then arrive whole.
    public var stream: Bool
    /// What its tokens cost (`council.<name>.priceIn`/`priceOut`); nil: no price.
    public var price: ModelPrice?

    public init(
        name: String, baseURL: String, apiKeyEnv: String? = nil, apiKey: String? = nil, model: String, tier: Tier,
        weight: Double = 1, timeout: Duration? = nil, stream: Bool = true, price: ModelPrice? = nil
    ) {
        self.price = price
        self.name = name
        self.baseURL = baseURL
        self.apiKeyEnv = apiKeyEnv
        self.apiKey = apiKey
        self.model = model
        self.tier = tier
        self.weight = weight
        self.timeout = timeout
        self.stream = stream
    }
}
