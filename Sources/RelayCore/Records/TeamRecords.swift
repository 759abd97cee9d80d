public import struct Foundation.Date

/// A chain saved by a team: its canonical DSL and who owns it.
public struct SavedChain: Sendable, Hashable, Codable {
    public var team: String
    public var name: String
    /// The canonical DSL (`input > grammar > output`).
    public var source: String
    public var creator: String
    public var createdAt: Date
    public var updatedAt: Date

    public init(team: String, name: String, source: String, creator: String, createdAt: Date, updatedAt: Date) {
        self.team = team
        self.name = name
        self.source = source
        self.creator = creator
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A team's own command: `/eli5 <text>` runs `template` with placeholders filled.
public struct CustomCommand: Sendable, Hashable, Codable {
    public var team: String
    public var name: String
    public var template: String
    public var creator: String
    public var createdAt: Date

    public init(team: String, name: String, template: String, creator: String, createdAt: Date) {
        self.team = team
        self.name = name
        self.template = template
        self.creator = creator
        self.createdAt = createdAt
    }
}

/// Whose settings: one user in a team, or one channel.
public enum SettingsScope: Sendable, Hashable {
    case user(team: String, user: String)
    case channel(team: String, channel: String)
}

/// What run history keeps.
public enum Retention: String, Sendable, Hashable, Codable, CaseIterable {
    /// Command line and result text are kept.
    case full
    /// Only the command name, scores and timing; no user or model text.
    case metadata
    /// Nothing is recorded.
    case off

    /// The stricter of two retentions (privacy wins).
    public func stricter(_ other: Retention) -> Retention {
        let order: [Retention] = [.full, .metadata, .off]
        return order.firstIndex(of: self)! >= order.firstIndex(of: other)! ? self : other
    }
}

/// Settings for one scope; nil means "not set here".
public struct Settings: Sendable, Hashable, Codable {
    /// Default translation language, as an ISO 639-1 code.
    public var lang: String?
    public var tier: Tier?
    public var retention: Retention?

    public init(lang: String? = nil, tier: Tier? = nil, retention: Retention? = nil) {
        self.lang = lang
        self.tier = tier
        self.retention = retention
    }

    public var isEmpty: Bool { lang == nil && tier == nil && retention == nil }
}

/// One finished run, as `/history` shows it.
public struct HistoryEntry: Sendable, Hashable, Codable {
    public var team: String
    public var user: String
    public var channel: String
    /// The command name (`translate`, `tribunal`, `run polish`…), always kept.
    public var command: String
    /// The full command line; nil when retention is `metadata`.
    public var commandLine: String?
    /// The result text; nil when retention is `metadata`.
    public var resultText: String?
    /// Whether the run succeeded.
    public var succeeded: Bool
    public var agreement: Double?
    public var modelsAnswered: Int?
    public var modelsAsked: Int?
    /// Seconds.
    public var elapsed: Double
    public var createdAt: Date

    public init(
        team: String, user: String, channel: String, command: String, commandLine: String?,
        resultText: String?, succeeded: Bool, agreement: Double? = nil, modelsAnswered: Int? = nil,
        modelsAsked: Int? = nil, elapsed: Double, createdAt: Date
    ) {
        self.team = team
        self.user = user
        self.channel = channel
        self.command = command
        self.commandLine = commandLine
        self.resultText = resultText
        self.succeeded = succeeded
        self.agreement = agreement
        self.modelsAnswered = modelsAnswered
        self.modelsAsked = modelsAsked
        self.elapsed = elapsed
        self.createdAt = createdAt
    }
}
