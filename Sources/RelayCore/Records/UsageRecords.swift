public import struct Foundation.Date

/// One model call a run made, as the store keeps it (`model_calls`): who asked, for which
/// command, which model, what it used and cost. No text: it is kept whatever the retention, as a
/// team's bill is (docs/admin.md, "Usage").
public struct ModelCallRecord: Sendable, Hashable, Codable {
    public var platform: String
    public var team: String
    public var user: String
    /// The command's name (`translate`, `tribunal`, `run`, a custom command's name).
    public var command: String
    /// The run's own id, the same for every call of one run: how commands are counted.
    public var run: String
    public var model: String
    public var tokensIn: Int
    public var tokensOut: Int
    public var estimated: Bool
    /// US dollars; nil when the model has no price.
    public var cost: Double?
    public var elapsedMilliseconds: Int
    public var at: Date

    public init(
        platform: String, team: String, user: String, command: String, run: String, model: String, tokensIn: Int, tokensOut: Int,
        estimated: Bool, cost: Double?, elapsedMilliseconds: Int, at: Date
    ) {
        self.platform = platform
        self.team = team
        self.user = user
        self.command = command
        self.run = run
        self.model = model
        self.tokensIn = tokensIn
        self.tokensOut = tokensOut
        self.estimated = estimated
        self.cost = cost
        self.elapsedMilliseconds = elapsedMilliseconds
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case platform, team, user, command, run, model, estimated, cost, at
        case tokensIn = "tokens_in"
        case tokensOut = "tokens_out"
        case elapsedMilliseconds = "elapsed_ms"
    }
}

/// The model calls of one run, written with its end.
public struct RunUsage: Sendable, Hashable {
    public var platform: String
    public var team: String
    public var user: String
    public var command: String
    public var run: String
    public var at: Date
    public var calls: [ModelUsage]

    public init(platform: String, team: String, user: String, command: String, run: String, at: Date, calls: [ModelUsage]) {
        self.platform = platform
        self.team = team
        self.user = user
        self.command = command
        self.run = run
        self.at = at
        self.calls = calls
    }

    /// One row per call.
    public var records: [ModelCallRecord] {
        calls.map { call in
            ModelCallRecord(
                platform: platform, team: team, user: user, command: command, run: run, model: call.model, tokensIn: call.tokensIn,
                tokensOut: call.tokensOut, estimated: call.estimated, cost: call.cost,
                elapsedMilliseconds: Int(call.elapsed.seconds * 1000), at: at)
        }
    }
}

/// Which calls a usage query reads: one team on one platform, optionally one user, from
/// `from` (inclusive) to `to` (exclusive).
public struct UsageQuery: Sendable, Hashable {
    public var platform: String?
    public var team: String
    public var user: String?
    public var from: Date
    public var to: Date

    public init(platform: String?, team: String, user: String? = nil, from: Date, to: Date) {
        self.platform = platform
        self.team = team
        self.user = user
        self.from = from
        self.to = to
    }

    public func matches(_ record: ModelCallRecord) -> Bool {
        (platform == nil || record.platform == platform) && record.team == team && (user == nil || record.user == user)
            && record.at >= from && record.at < to
    }
}

/// What a set of calls adds up to, by command and by model (`/usage`).
public struct UsageSummary: Sendable, Hashable {
    public struct Line: Sendable, Hashable {
        public var name: String
        /// Runs (by command) or calls (by model).
        public var count: Int
        public var tokensIn: Int
        public var tokensOut: Int
        /// Nil when no call of the line has a price.
        public var cost: Double?
        public var estimated: Bool

        public var tokens: Int { tokensIn + tokensOut }
    }

    public var commands: Int
    public var total: Line
    /// Most tokens first.
    public var byCommand: [Line]
    public var byModel: [Line]

    public init(_ records: [ModelCallRecord]) {
        func line(_ name: String, _ records: [ModelCallRecord], count: Int) -> Line {
            let priced = records.compactMap(\.cost)
            return Line(
                name: name, count: count, tokensIn: records.reduce(0) { $0 + $1.tokensIn }, tokensOut: records.reduce(0) { $0 + $1.tokensOut },
                cost: priced.isEmpty ? nil : priced.reduce(0, +), estimated: records.contains(where: \.estimated))
        }
        let runs = Set(records.map(\.run)).count
        commands = runs
        total = line("total", records, count: runs)
        let order: (Line, Line) -> Bool = { $0.tokens != $1.tokens ? $0.tokens > $1.tokens : $0.name < $1.name }
        byCommand = Dictionary(grouping: records, by: \.command).map { name, calls in line(name, calls, count: Set(calls.map(\.run)).count) }
            .sorted(by: order)
        byModel = Dictionary(grouping: records, by: \.model).map { name, calls in line(name, calls, count: calls.count) }.sorted(by: order)
    }
}
