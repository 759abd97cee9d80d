/// Who a backend asks at a tier, where the backend knows: the council does (its configured
/// models); the Rhea gateway picks its own models, so it answers nil.
///
/// A chain reads it to escalate to a model that is really another one, and to say when a
/// `verify` is a model judging its own text (docs/chains.md, "Escalation").
public struct TierRoster: Sendable, Hashable {
    /// One model as the roster names it: `name` is what replies show (`QuickResult.model`),
    /// `endpoint` what makes it the same model under two names (its API base and model id).
    public struct Model: Sendable, Hashable {
        public var name: String
        public var endpoint: String
        /// What its tokens cost, where the operator priced it: a run's budget estimate.
        public var price: ModelPrice?

        public init(name: String, endpoint: String, price: ModelPrice? = nil) {
            self.name = name
            self.endpoint = endpoint
            self.price = price
        }
    }

    /// Whether the tier has models of its own; a tier without borrows the nearest tier's.
    public var hasOwnModels: Bool
    /// Who answers a quick request, in the order tried (the first unless it fails).
    public var writers: [Model]
    /// Who a consensus asks, in order; a consensus of k asks the first k.
    public var judges: [Model]

    public init(hasOwnModels: Bool, writers: [Model], judges: [Model]) {
        self.hasOwnModels = hasOwnModels
        self.writers = writers
        self.judges = judges
    }

    /// The judges a consensus of `k` asks (at least one, as the council does).
    public func judges(k: Int) -> [Model] { Array(judges.prefix(max(1, k))) }

    /// The roster's model that goes by `name`, if any.
    public func model(named name: String) -> Model? {
        (writers + judges).first { $0.name == name }
    }
}
