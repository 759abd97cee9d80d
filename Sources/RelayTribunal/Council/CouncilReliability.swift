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
/// paid once every 40 fact-checks once the ledger is full: about 1.3 ms per tribunal. Whether to
/// learn is decided from the entries' stamps (id, backend, mark: `stamps`), not from the entries
/// with their votes, which only a relearning reads. A failed read keeps the last estimate.
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

        /// Whether the council's entries `window` (newest first) differ enough from what this
        /// snapshot learned: never learned yet, grown by `relearnStep` claims, or marks changed.
        func needsLearning(from window: [LedgerStamp]) -> Bool {
            guard claims > 0 || newestID > 0 else { return true }
            // Unwritten entries have no id yet: they count as new.
            let grown = window.count { $0.id == 0 || $0.id > newestID }
            return grown >= CouncilReliability.relearnStep(after: claims) || Self.marks(window) != marks
        }

        static func marks(_ window: [LedgerStamp]) -> Set<MarkKey> {
            Set(window.compactMap { stamp in stamp.mark.map { MarkKey(id: stamp.id, verdict: $0) } })
        }
    }

    /// One mark as the cache compares them: a changed or new mark is a reason to learn again.
    struct MarkKey: Hashable {
        var id: Int64
        var verdict: Verdict
    }

    let estimator: ReliabilityEstimator
    let history: @Sendable () async throws -> [LedgerEntry]
    let stamps: @Sendable () async throws -> [LedgerStamp]
    private let state: Mutex<Snapshot>

    /// - Parameters:
    ///   - weights: the configured `weight:` of each model, which sets its prior.
    ///   - history: the ledger's newest entries, newest first (`LedgerStore.recentLedger`).
    ///   - stamps: the same entries' stamps (`LedgerStore.ledgerStamps`).
    public init(
        weights: [String: Double], history: @escaping @Sendable () async throws -> [LedgerEntry],
        stamps: @escaping @Sendable () async throws -> [LedgerStamp]
    ) {
        let estimator = ReliabilityEstimator(prior: ReliabilityPrior(weights: weights))
        self.estimator = estimator
        self.history = history
        self.stamps = stamps
        state = Mutex(Snapshot(estimate: estimator.estimate([]), calibrator: ScoreCalibrator(samples: []), claims: 0, marked: 0))
    }

    /// The current snapshot for the ledger's history with `unwritten` (newest first) before it:
    /// fact-checks made but not written yet. Learned again only when that history has grown by
    /// `relearnStep` claims or its marks changed; otherwise the cached one.
    public func refreshed(unwritten: [LedgerEntry] = []) async -> Snapshot {
        let previous = state.withLock { $0 }
        let unwrittenStamps = unwritten.map(LedgerStamp.init)
        // The stamps first: most consensus requests find nothing to learn, and reading 2 000
        // entries with their votes to see that was most of the console's council page.
        if let stamps = try? await stamps(), !previous.needsLearning(from: Self.window(unwrittenStamps, stamps, backend: \.backend)) { return previous }
        guard let written = try? await history() else { return previous }
        let entries = Self.window(unwritten, written, backend: \.backend)
        let stamped = entries.map(LedgerStamp.init)
        guard previous.needsLearning(from: stamped) else { return previous }
        let marks = Snapshot.marks(stamped)
        let claims = entries.map(Self.judgedClaim)
        let estimate = estimator.estimate(claims, startingFrom: previous.estimate)
        let snapshot = Snapshot(
            estimate: estimate, calibrator: ScoreCalibrator(samples: estimate.calibrationSamples(claims)), claims: claims.count,
            marked: claims.count { $0.mark != nil }, newestID: entries.map(\.id).max() ?? 0, marks: marks)
        state.withLock { $0 = snapshot }
        return snapshot
    }

    /// The council's entries among the newest `historyLimit` of `unwritten` followed by `written`.
    static func window<Entry>(_ unwritten: [Entry], _ written: [Entry], backend: KeyPath<Entry, String>) -> [Entry] {
        (unwritten.isEmpty ? written : Array((unwritten + written).prefix(historyLimit))).filter { $0[keyPath: backend] == "council" }
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
