public import RelayCore

/// The council's models and rules.
public struct CouncilConfiguration: Sendable, Hashable {
    /// In preference order: `quick` tries a tier's models in this order.
    public var models: [CouncilModel]
    /// How many answers a consensus needs (capped by how many models are asked).
    public var quorum: Int
    /// Overall consensus deadline: past it, the council answers with whoever replied.
    public var deadline: Duration
    /// Per-call timeout for models without their own.
    public var defaultTimeout: Duration
    /// The model that writes the consensus answer; nil: the most confident plurality answer.
    public var chairman: String?

    public init(models: [CouncilModel], quorum: Int = 2, deadline: Duration = .seconds(30), defaultTimeout: Duration = .seconds(20), chairman: String? = nil) {
        self.models = models
        self.quorum = quorum
        self.deadline = deadline
        self.defaultTimeout = defaultTimeout
        self.chairman = chairman
    }

    /// The models for a tier, in preference order: that tier's first, then the nearest tiers
    /// (lower before higher), so a consensus can fill k from neighbours.
    public func models(nearest tier: Tier) -> [CouncilModel] {
        let order = Tier.allCases.sorted { a, b in
            let da = abs(Self.rank(a) - Self.rank(tier))
            let db = abs(Self.rank(b) - Self.rank(tier))
            return da != db ? da < db : Self.rank(a) < Self.rank(b)
        }
        return order.flatMap { t in models.filter { $0.tier == t } }
    }

    /// Who answers a quick request at `tier`, in the order tried: the tier's own models, or,
    /// for a tier with none, the nearest tier's (rather than failing).
    public func writers(for tier: Tier) -> [CouncilModel] {
        let own = models.filter { $0.tier == tier }
        return own.isEmpty ? models(nearest: tier) : own
    }

    /// Who a consensus of `k` asks at `tier`: the first k (at least 1, at most 10) of the tier
    /// and its neighbours.
    public func judges(for tier: Tier, k: Int) -> [CouncilModel] {
        Array(models(nearest: tier).prefix(max(1, min(k, 10))))
    }

    /// The same, as the roster a chain reads.
    public func roster(for tier: Tier) -> TierRoster {
        let named = { (model: CouncilModel) in TierRoster.Model(name: model.name, endpoint: "\(model.baseURL) \(model.model)", price: model.price) }
        return TierRoster(
            hasOwnModels: models.contains { $0.tier == tier }, writers: writers(for: tier).map(named),
            judges: judges(for: tier, k: 10).map(named))
    }

    static func rank(_ tier: Tier) -> Int { Tier.allCases.firstIndex(of: tier)! }

    /// Human-readable summary: "3 models (cheap: a, b; mid: c)".
    public var summary: String {
        let groups = Tier.allCases.compactMap { tier -> String? in
            let names = models.filter { $0.tier == tier }.map(\.name)
            return names.isEmpty ? nil : "\(tier.rawValue): \(names.joined(separator: ", "))"
        }
        return "\(models.count) model\(models.count == 1 ? "" : "s") (\(groups.joined(separator: "; ")))"
    }
}
