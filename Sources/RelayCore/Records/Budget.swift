public import struct Foundation.Date

/// What admission asks of the store for a run that may call priced models (docs/admin.md,
/// "Budgets"): keep `reserve` US dollars of the team's month for it, unless what the month has
/// spent and what the runs admitted before it hold would then pass the team's budget — its own
/// (`Settings.budget` in its `team` scope), read by the store in the same step, else
/// `defaultLimit`. In one transaction with the item's admission, so replicas sharing a store
/// keep one count, and without a read before it (admission answers the platform in seconds,
/// also while the store is slow); released when the run ends (its inbox item goes) as its
/// calls' real cost is written.
public struct BudgetHold: Sendable, Hashable {
    public var platform: String
    public var team: String
    /// Every team's budget unless it has its own (`BUDGET_MONTHLY_USD`); nil: none.
    public var defaultLimit: Double?
    /// This run's estimated cost, US dollars: more than it can spend.
    public var reserve: Double
    public var month: UsageMonth

    public init(platform: String, team: String, defaultLimit: Double?, reserve: Double, month: UsageMonth) {
        self.platform = platform
        self.team = team
        self.defaultLimit = defaultLimit
        self.reserve = reserve
        self.month = month
    }

    /// Whether a run reserving `reserve` fits in `limit` beside `spent` and `reserved`.
    public func fits(limit: Double, spent: Double, reserved: Double) -> Bool {
        spent < limit && spent + reserved + reserve <= limit
    }

    /// What admission decides for a team whose budget is `limit` (nil: none).
    public func decision(limit: Double?, spent: Double, reserved: Double) -> BudgetAdmission {
        guard let limit else { return .unchecked }
        return fits(limit: limit, spent: spent, reserved: reserved) ? .within : .over
    }
}

/// What admission decided of a run's budget; kept with the inbox item, never in the event's
/// stored form.
public enum BudgetAdmission: Sendable, Hashable {
    /// Admitted without a hold: no budget, or no priced model, or a run outside the inbox (the
    /// terminal). The run looks at the budget itself when it starts.
    case unchecked
    /// Within the team's budget, its estimate held.
    case within
    /// Its models would pass the team's budget: the run answers so and asks none.
    case over
}

/// A team's month against its budget, for `/admin budget` and `/usage team`.
public struct BudgetStanding: Sendable, Hashable {
    public var spent: Double
    /// What runs under way hold.
    public var reserved: Double

    public init(spent: Double, reserved: Double) {
        self.spent = spent
        self.reserved = reserved
    }
}
