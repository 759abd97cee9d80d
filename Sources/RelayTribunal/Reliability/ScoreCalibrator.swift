#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One past verdict for calibration: the score it was given and whether it was right (or the chance it was).
public struct CalibrationSample: Sendable, Hashable {
    /// The raw score, 0…1.
    public var score: Double
    /// 1 when the verdict was right, 0 when wrong; values between count as soft outcomes.
    public var outcome: Double
    public var weight: Double

    public init(score: Double, outcome: Double, weight: Double = 1) {
        self.score = score
        self.outcome = outcome
        self.weight = weight
    }
}

/// Maps a raw score to the probability that the verdict is right, as far as history shows it; with no history, the raw score itself.
///
/// Platt scaling on the score's log-odds, `calibrated = σ(slope × logit(score) + offset)`, fitted
/// to the samples by maximum likelihood with a Gaussian prior centred on the identity (slope 1,
/// offset 0). Two parameters need far fewer samples than bins do, which matters because the
/// samples are people's marks; the prior keeps a handful of marks from swinging the score.
public struct ScoreCalibrator: Sendable, Hashable {
    /// Multiplies the score's log-odds: below 1 when history shows the scores too confident.
    public private(set) var slope = 1.0
    public private(set) var offset = 0.0
    /// The samples' total weight.
    public private(set) var weight = 0.0

    /// Fits to `samples`; `priorWeight` is how firmly the identity holds (a prior precision, about that many samples' worth).
    public init(samples: [CalibrationSample], priorWeight: Double = 10) {
        let usable = samples.filter { $0.weight > 0 && $0.score.isFinite && $0.outcome.isFinite }
        weight = usable.reduce(0) { $0 + $1.weight }
        guard !usable.isEmpty else { return }
        let points = usable.map { (x: Self.logit($0.score), y: min(1, max(0, $0.outcome)), w: $0.weight) }
        // The penalised log-likelihood is strictly concave: Newton steps, halved until they improve it, settle it.
        let objective = { (a: Double, b: Double) in
            points.reduce(-priorWeight / 2 * ((a - 1) * (a - 1) + b * b)) { total, point in
                let z = a * point.x + b
                // log σ(z) and log(1 − σ(z)), written to stay finite for large |z|.
                return total - point.w * (point.y * Self.softplus(-z) + (1 - point.y) * Self.softplus(z))
            }
        }
        var current = objective(slope, offset)
        for _ in 0..<50 {
            var gradient = (a: -priorWeight * (slope - 1), b: -priorWeight * offset)
            var hessian = (aa: priorWeight, ab: 0.0, bb: priorWeight)
            for point in points {
                let p = Self.sigmoid(slope * point.x + offset)
                gradient.a += point.w * (point.y - p) * point.x
                gradient.b += point.w * (point.y - p)
                let curvature = point.w * p * (1 - p)
                hessian.aa += curvature * point.x * point.x
                hessian.ab += curvature * point.x
                hessian.bb += curvature
            }
            let determinant = hessian.aa * hessian.bb - hessian.ab * hessian.ab
            guard determinant > 0 else { break }
            var step = (
                a: (hessian.bb * gradient.a - hessian.ab * gradient.b) / determinant,
                b: (hessian.aa * gradient.b - hessian.ab * gradient.a) / determinant
            )
            var next = objective(slope + step.a, offset + step.b)
            while next < current && abs(step.a) + abs(step.b) > 1e-12 {
                step = (step.a / 2, step.b / 2)
                next = objective(slope + step.a, offset + step.b)
            }
            guard next >= current else { break }
            slope += step.a
            offset += step.b
            let gain = next - current
            current = next
            if gain < 1e-10 { break }
        }
    }

    /// The calibrated probability for a raw score.
    public func calibrated(_ score: Double) -> Double { Self.sigmoid(slope * Self.logit(score) + offset) }

    private static func logit(_ p: Double) -> Double {
        let clamped = min(1 - 1e-9, max(1e-9, p))
        return log(clamped / (1 - clamped))
    }

    private static func sigmoid(_ x: Double) -> Double { 1 / (1 + exp(-x)) }

    /// log(1 + eˣ) without overflow.
    private static func softplus(_ x: Double) -> Double { x > 30 ? x : log1p(exp(x)) }
}
