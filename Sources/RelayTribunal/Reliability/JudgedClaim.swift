public import RelayCore

/// One claim as the reliability estimator sees it: each asked model's vote and, where a person marked it, the truth.
public struct JudgedClaim: Sendable, Hashable {
    /// One model's answer to the claim.
    public struct Vote: Sendable, Hashable {
        /// The configured model name; the estimator learns one record per name.
        public var model: String
        /// nil when the model answered without a readable verdict: such a vote says nothing.
        public var verdict: Verdict?
        /// The confidence the model stated (0…1), if any; used only as far as history shows it means something.
        public var confidence: Double?

        public init(model: String, verdict: Verdict?, confidence: Double? = nil) {
            self.model = model
            self.verdict = verdict
            self.confidence = confidence
        }
    }

    public var votes: [Vote]
    /// A person's mark (true, false or partly), taken as the known truth of the claim.
    public var mark: Verdict?

    public init(votes: [Vote], mark: Verdict? = nil) {
        self.votes = votes
        self.mark = mark
    }
}

extension Verdict {
    /// The verdict's row and column in the estimator's matrices: its place in `allCases`.
    var reliabilityIndex: Int {
        switch self {
        case .true: 0
        case .false: 1
        case .partly: 2
        case .unverifiable: 3
        }
    }

    /// How many verdict classes the estimator tells apart.
    static let reliabilityClassCount = 4
}
