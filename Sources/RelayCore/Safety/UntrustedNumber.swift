import CoreMetrics
import Logging

/// Checks a number that came from outside (a backend's answer, a platform's payload or header)
/// before anything uses it: the one place where such numbers are judged, so every adapter and
/// backend does it the same way.
///
/// A value inside its range passes unchanged. Anything else — out of range, or NaN — is
/// replaced (nil for `checked`, the nearest bound for `clamped`), logged once at warning level
/// with its source and field, and counted in `relay_untrusted_values_clamped_total{source,field}`.
/// Absent values (nil in) are not reported: an optional field may be missing.
///
/// `source` and `field` become metric labels: pass literals from the code ("rhea",
/// "agreement_score"), never text from the payload, so the label set stays bounded.
///
/// Why here: RelayCore is the module every backend and platform adapter depends on, and
/// swift-log and swift-metrics are API packages without I/O (`serve` bootstraps the backends),
/// so the primitive reports directly instead of through a reporter each caller must pass in.
public enum UntrustedNumber {
    /// The counter every replaced value increments.
    public static let metricLabel = "relay_untrusted_values_clamped_total"

    /// What a report says; `Observer` receives it instead of the log and the counter.
    public struct Report: Sendable, Hashable {
        public var source: String
        public var field: String
        /// The value as received, for the log line.
        public var value: String
        /// What was used instead ("nil" when the caller's fallback applies).
        public var replacement: String
    }

    /// Receives every report made in the current task instead of the log and the counter.
    /// A class around the closure: a task-local holding a bare optional closure crashed the
    /// release build in `swift_task_localValuePush`.
    public final class Observer: Sendable {
        let observe: @Sendable (Report) -> Void

        public init(_ observe: @escaping @Sendable (Report) -> Void) {
            self.observe = observe
        }
    }

    /// Set for a task (the fuzzer) that replaces reporting: millions of hostile inputs would
    /// otherwise flood the log and the process-wide counter that tests and operators read.
    @TaskLocal public static var observer: Observer?

    /// `value` when `range` contains it; otherwise nil (the caller's fallback applies), reported.
    public static func checked<Value: Comparable & Sendable>(
        _ value: Value?, in range: ClosedRange<Value>, source: String, field: String
    ) -> Value? {
        guard let value else { return nil }
        if range.contains(value) { return value }
        report(source: source, field: field, value: "\(value)", replacement: "nil")
        return nil
    }

    /// `value` when `range` contains it; the nearest bound when it lies outside; nil when it is
    /// not comparable at all (NaN). Every replacement is reported.
    public static func clamped<Value: Comparable & Sendable>(
        _ value: Value?, to range: ClosedRange<Value>, source: String, field: String
    ) -> Value? {
        guard let value else { return nil }
        if range.contains(value) { return value }
        let replacement: Value? =
            if value < range.lowerBound { range.lowerBound } else if value > range.upperBound { range.upperBound } else { nil }
        report(source: source, field: field, value: "\(value)", replacement: replacement.map { "\($0)" } ?? "nil")
        return replacement
    }

    /// Seconds as a `Duration` when they are finite and within `range`; otherwise nil
    /// (the caller's fallback applies), reported.
    public static func seconds(_ value: Double?, in range: ClosedRange<Duration>, source: String, field: String) -> Duration? {
        guard let value else { return nil }
        guard value.isFinite, value >= range.lowerBound.seconds, value <= range.upperBound.seconds else {
            report(source: source, field: field, value: "\(value)", replacement: "nil")
            return nil
        }
        return min(range.upperBound, max(range.lowerBound, Duration.clampedSeconds(value, maximum: range.upperBound)))
    }

    /// Logs and counts one replaced value (or hands it to the task's `observer`).
    public static func report(source: String, field: String, value: String, replacement: String) {
        // A hostile value can be a megabyte of digits: the log keeps its start.
        let shown = value.count > 40 ? String(value.prefix(40)) + "…" : value
        let report = Report(source: source, field: field, value: shown, replacement: replacement)
        if let observer {
            observer.observe(report)
            return
        }
        Logger(label: "rhea-relay.untrusted").warning(
            "untrusted number out of range; replaced",
            metadata: [
                "untrusted.source": "\(source)", "untrusted.field": "\(field)", "untrusted.value": "\(shown)",
                "untrusted.used": "\(replacement)",
            ])
        Counter(label: metricLabel, dimensions: [("source", source), ("field", field)]).increment()
    }
}
