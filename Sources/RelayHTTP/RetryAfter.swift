public import Foundation
import RelayCore

/// Reads how long a server asks us to wait: the `Retry-After` header (RFC 9110 §10.2.3: seconds
/// or an HTTP date) and the JSON `retry_after` fields some platforms send instead.
///
/// What comes from outside is clamped: a non-finite value or an unreadable header is ignored
/// (nil, so the caller uses its own default), a negative delay or a date in the past means
/// "now", and nothing is ever longer than `maximum` — a hostile or broken server must not park
/// a conversation for hours, and no value can trap when turned into a `Duration`. Every value
/// replaced that way (not a past date: clocks differ) is logged and counted by
/// `UntrustedNumber` as `field="retry_after"`.
public enum RetryAfter {
    /// The longest wait any server can impose: 15 minutes.
    public static let maximum: Duration = .seconds(15 * 60)

    /// The header's delay, or nil when it is absent or unreadable.
    public static func parse(_ header: String?, now: Date = Date(), source: String = "http") -> Duration? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if let seconds = Double(text) {
            return clamp(seconds: seconds, source: source)
        }
        guard let date = httpDate(text) else {
            UntrustedNumber.report(source: source, field: "retry_after", value: text, replacement: "nil")
            return nil
        }
        // A date already past is clock skew, not an attack: "now", unreported.
        return clamp(seconds: max(0, date.timeIntervalSince(now)), source: source)
    }

    /// A delay in seconds from a JSON field or a header, clamped to `0...maximum`; nil when it
    /// is not a finite number. `source` labels the report of a replaced value.
    public static func clamp(seconds: Double, source: String = "http") -> Duration? {
        guard seconds.isFinite else {
            UntrustedNumber.report(source: source, field: "retry_after", value: "\(seconds)", replacement: "nil")
            return nil
        }
        let clamped = UntrustedNumber.clamped(seconds, to: 0...maximum.seconds, source: source, field: "retry_after") ?? 0
        return Duration.clampedSeconds(clamped, maximum: maximum)
    }

    /// An HTTP date in any of the three forms RFC 9110 says a recipient must accept:
    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`)
    /// and asctime (`Sun Nov  6 08:49:37 1994`).
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        let collapsed = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: collapsed) { return date }
        }
        return nil
    }
}
