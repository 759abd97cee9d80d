public import RelayCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the council knows of its judges: the reliability estimate learned from the ledger, and
/// the calibration of its score (issue 14, points 2 and 3).
///
/// Before each consensus the council asks for a fresh estimate. The history is the newest
/// consensus entries of every team judged by this council (`backend == "council"`), read through
/// `history`; learning from all teams gives every model the most evidence and tells no team
/// anything about another's claims. Estimating 2 000 claims takes about 2 ms (tribunal-sim), so
/// it is done each time rather than cached by guesswork; a failed read keeps the last estimate.
public final class CouncilReliability: Sendable {
    /// The newest entries learned from.
    public static let historyLimit = 2000

    /// The estimate and calibration a consensus combines votes with.
    public struct Snapshot: Sendable {
        public var estimate: ReliabilityEstimate
        public var calibrator: ScoreCalibrator
        public var claims: Int
        public var marked: Int
    }

    let estimator: ReliabilityEstimator
    let history: @Sendable () async throws -> [LedgerEntry]
    private let state: Mutex<Snapshot>

    /// - Parameters:
    ///   - weights: the configured `weight:` of each model, which sets its prior.
    ///   - history: the ledger's newest entries, newest first (`LedgerStore.recentLedger`).
    public init(weights: [String: Double], history: @escaping @Sendable () async throws -> [LedgerEntry]) {
        let estimator = ReliabilityEstimator(prior: ReliabilityPrior(weights: weights))
        self.estimator = estimator
        self.history = history
        state = Mutex(Snapshot(estimate: estimator.estimate([]), calibrator: ScoreCalibrator(samples: []), claims: 0, marked: 0))
    }

    /// The current snapshot, learned again from the ledger's history, with `unwritten` (newest
    /// first) before it: fact-checks made but not written yet.
    public func refreshed(unwritten: [LedgerEntry] = []) async -> Snapshot {
        let previous = state.withLock { $0 }
        guard let written = try? await history() else { return previous }
        let entries = unwritten.isEmpty ? written : Array((unwritten + written).prefix(Self.historyLimit))
        let claims = entries.filter { $0.backend == "council" }.map(Self.judgedClaim)
        let estimate = estimator.estimate(claims, startingFrom: previous.estimate)
        let snapshot = Snapshot(
            estimate: estimate, calibrator: ScoreCalibrator(samples: estimate.calibrationSamples(claims)), claims: claims.count,
            marked: claims.count { $0.mark != nil })
        state.withLock { $0 = snapshot }
        return snapshot
    }

    /// A ledger entry as the estimator reads it: each asked model's verdict and stated
    /// confidence, and a person's mark as the known truth.
    static func judgedClaim(_ entry: LedgerEntry) -> JudgedClaim {
        JudgedClaim(
            votes: entry.judges.filter { $0.error == nil }.map { JudgedClaim.Vote(model: $0.model, verdict: $0.verdict, confidence: $0.confidence) },
            mark: entry.mark?.verdict)
    }

    /// What a vote of a model with this accuracy adds, in natural log-odds against one wrong
    /// verdict: 0 for chance (a quarter), higher for better models, negative for worse.
    static func weight(accuracy: Double) -> Double {
        let classes = Double(Verdict.allCases.count)
        let clamped = min(max(accuracy, 1e-6), 1 - 1e-6)
        return log(clamped * (classes - 1) / (1 - clamped))
    }
}
