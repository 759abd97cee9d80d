/// What the council has learned of its judges from the ledger, for `/council` (issue 14).
public struct CouncilReport: Sendable, Hashable {
    /// One configured model.
    public struct Judge: Sendable, Hashable {
        public var model: String
        public var tier: Tier
        /// The estimated chance that its verdict is right, 0…1.
        public var accuracy: Double
        /// How sure that estimate is: its standard deviation, 0…1 (0 when it was not measured).
        public var spread: Double
        /// Verdicts it gave in the history learned from; 0 means the figures are its prior.
        public var judged: Int
        /// What its vote weighs now: the log-odds its estimated accuracy implies (0: says nothing).
        public var weight: Double
        /// The hand-set `weight:` from configuration, which sets its prior.
        public var configuredWeight: Double
        /// By other model: the share of its verdicts that repeat that model's, where the two agree more than their
        /// records explain, as judges that share mistakes do (issue 29); where they agree, its vote adds little.
        public var repeats: [String: Double]

        public init(
            model: String, tier: Tier, accuracy: Double, spread: Double = 0, judged: Int, weight: Double, configuredWeight: Double,
            repeats: [String: Double] = [:]
        ) {
            self.model = model
            self.tier = tier
            self.accuracy = accuracy
            self.spread = spread
            self.judged = judged
            self.weight = weight
            self.configuredWeight = configuredWeight
            self.repeats = repeats
        }
    }

    public var judges: [Judge]
    /// Claims in the history learned from.
    public var claims: Int
    /// Of those, how many a person marked.
    public var marked: Int
    /// How the score is calibrated, in words.
    public var calibration: String

    public init(judges: [Judge], claims: Int, marked: Int, calibration: String) {
        self.judges = judges
        self.claims = claims
        self.marked = marked
        self.calibration = calibration
    }
}
