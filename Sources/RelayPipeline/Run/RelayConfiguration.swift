public import RelayCore

/// Defaults and limits of the relay itself (backends and adapters have their own).
public struct RelayConfiguration: Sendable {
    public var defaultTier: Tier
    /// Models per tribunal and `verify` when `--k` is not given.
    public var defaultK: Int
    public var defaultLanguage: Language
    public var defaultRetention: Retention
    public var chainLimits: ChainLimits
    public var maxChainsPerTeam: Int
    public var maxCustomCommandsPerTeam: Int
    /// How many runs `/history` shows.
    public var historyLength: Int
    /// Days a run is kept in history (`relay.historyDays`), 1 or more; retention `off` keeps none.
    public var historyDays: Int
    /// How long an inbound event key is remembered (longer than any platform's retry window).
    public var dedupeLifetime: Duration
    /// The most messages of a thread read for `/summarize` and friends.
    public var threadMessageLimit: Int
    /// How long a voice note waits for room in the voice memory budget
    /// (`TranscriptionLimits.memoryBudget`) before it is refused with a reply that says so.
    public var voiceMemoryWait: Duration
    /// The operator's list of team admins (`ADMIN_USERS`; docs/admin.md).
    public var operatorAdmins: OperatorAdmins
    /// Every team's monthly budget in US dollars unless it set its own (`BUDGET_MONTHLY_USD`;
    /// docs/admin.md, "Budgets"); nil: none.
    public var monthlyBudget: Double?

    public init(
        defaultTier: Tier = .cheap, defaultK: Int = 3, defaultLanguage: Language = .english,
        defaultRetention: Retention = .full, chainLimits: ChainLimits = ChainLimits(),
        maxChainsPerTeam: Int = 100, maxCustomCommandsPerTeam: Int = 50, historyLength: Int = 10,
        historyDays: Int = 90, dedupeLifetime: Duration = .seconds(24 * 3600), threadMessageLimit: Int = 200,
        voiceMemoryWait: Duration = .seconds(30), operatorAdmins: OperatorAdmins = OperatorAdmins()
    ) {
        self.defaultTier = defaultTier
        self.defaultK = defaultK
        self.defaultLanguage = defaultLanguage
        self.defaultRetention = defaultRetention
        self.chainLimits = chainLimits
        self.maxChainsPerTeam = maxChainsPerTeam
        self.maxCustomCommandsPerTeam = maxCustomCommandsPerTeam
        self.historyLength = historyLength
        self.historyDays = max(1, historyDays)
        self.dedupeLifetime = dedupeLifetime
        self.threadMessageLimit = max(1, threadMessageLimit)
        self.voiceMemoryWait = voiceMemoryWait
        self.operatorAdmins = operatorAdmins
    }
}
