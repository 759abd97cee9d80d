public import RelayCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the council knows of its judges: the reliability estimate learned from the ledger, and
/// the calibration of its score (issues 14 and 29).
///
/// The history is the newest consensus entries of every team judged by this council
/// (`backend == "council"`), read through `history`; learning from all teams gives every model the
/// most evidence and tells no team anything about another's claims. The estimate is cached by the
/// ledger's size: it is learned again when the history has grown by `relearnStep` claims since it
/// was last learned (one claim while it is small, 2 % of it later), or when people's marks changed,
/// not before every consensus. Learning from 2 000 claims of five models, with the resampled fits,
/// held-out folds and the check for shared mistakes, takes about 55 ms (council-bench, release),
/// paid once every 40 fact-checks once the ledger is full: about 1.3 ms per tribunal. A failed read
/// keeps the last estimate.
public final class CouncilReliability: Sendable {
    /// The newest entries learned from.
    public static let historyLimit = 2000

    /// Claims the history must grow by before the council learns again, after learning from `claims`.
    public static func relearnStep(after claims: Int) -> Int { max(1, claims / 50) }

    /// The estimate and calibration a consensus combines votes with.
    public struct Snapshot: Sendable {
        public var estimate: ReliabilityEstimate
        public var calibrator: ScoreCalibrator
        public var claims: Int
        public var marked: Int
        /// The newest written entry learned from (ids grow), and the marks seen: what decides whether to learn again.
        var newestID: Int64 = 0
        var marks: Set<MarkKey> = []
    }

    /// One mark as the cache compares them: a changed or new mark is a reason to learn again.
    struct MarkKey: Hashable {
        var id: Int64
        var verdict: Verdict
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

    /// The current snapshot for the ledger's history with `unwritten` (newest first) before it:
    /// fact-checks made but not written yet. Learned again only when that history has grown by
    /// `relearnStep` claims or its marks changed; otherwise the cached one.
    public func refreshed(unwritten: [LedgerEntry] = []) async -> Snapshot {
        let previous = state.withLock { $0 }
        guard let written = try? await history() else { return previous }
        let entries = (unwritten.isEmpty ? written : Array((unwritten + written).prefix(Self.historyLimit))).filter { $0.backend == "council" }
        let marks = Set(entries.compactMap { entry in entry.mark.map { MarkKey(id: entry.id, verdict: $0.verdict) } })
        // Unwritten entries have no id yet: they count as new.
        let grown = entries.count { $0.id == 0 || $0.id > previous.newestID }
        let learned = previous.claims > 0 || previous.newestID > 0
        guard !learned || grown >= Self.relearnStep(after: previous.claims) || marks != previous.marks else { return previous }
        let claims = entries.map(Self.judgedClaim)
        let estimate = estimator.estimate(claims, startingFrom: previous.estimate)
        let snapshot = Snapshot(
            estimate: estimate, calibrator: ScoreCalibrator(samples: estimate.calibrationSamples(claims)), claims: claims.count,
            marked: claims.count { $0.mark != nil }, newestID: entries.map(\.id).max() ?? 0, marks: marks)
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
