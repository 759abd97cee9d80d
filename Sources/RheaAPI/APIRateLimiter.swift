import Foundation
import Synchronization

/// Where the API's per-key limits are counted: in memory for one process (`APIRateLimiter`),
/// in the shared store for replicas (`SharedAPIRateLimiter`), so several replicas together
/// allow a key no more than one would.
protocol APICallLimiter: Sendable {
    /// Counts a call by `caller` at `now` if it keeps the limits.
    func admit(_ caller: String, now: Date) async -> APILimitDecision
}

enum APILimitDecision: Equatable {
    case allowed
    /// Refused; the detail says which limit, `retryAfter` when a call would next be allowed.
    case refused(detail: String, retryAfter: Int)
    /// The count could not be taken (the shared store did not answer): the call is refused
    /// with 503 and may be retried, rather than let through uncounted.
    case unavailable(retryAfter: Int)

    static func minuteLimit(_ perMinute: Int, retryAfter: Int) -> Self {
        .refused(detail: "Rate limit (\(perMinute)/min) exceeded", retryAfter: retryAfter)
    }

    static func dayLimit(_ perDay: Int, retryAfter: Int) -> Self {
        .refused(detail: "Daily limit (\(perDay) calls) exceeded", retryAfter: retryAfter)
    }
}

/// Calls per caller per minute and per 24 hours, sliding, as the gateway counts them (contract
/// §1.4) — but a refusal says when to come back (`Retry-After`), which the gateway does not.
///
/// The minute is a log of call times (at most `perMinute` entries); the day counts calls per
/// minute (at most 1 440 entries), so a caller costs a few kilobytes whatever the limits. Only
/// authenticated callers get a bucket, and idle buckets are dropped, so memory follows the
/// number of real keys and token subjects.
final class APIRateLimiter: APICallLimiter {
    let perMinute: Int
    let perDay: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    init(perMinute: Int, perDay: Int) {
        self.perMinute = max(1, perMinute)
        self.perDay = max(1, perDay)
    }

    private struct Bucket {
        /// Call times in the last 60 s, oldest first.
        var minute: [Double] = []
        /// (minute number, calls in it) for the last 24 h, oldest first.
        var day: [(minute: Int, count: Int)] = []
        var dayTotal = 0
        var last: Double = 0

        mutating func forget(before now: Double) {
            let minuteStart = now - 60
            if let keep = minute.firstIndex(where: { $0 > minuteStart }) { minute.removeFirst(keep) } else { minute.removeAll() }
            // A minute's calls count until the minute has ended a day ago: when a refusal's
            // Retry-After says, and never more than `perDay` in any 24 hours.
            let dayStart = Int((now - 86_400) / 60)
            while let first = day.first, first.minute < dayStart {
                dayTotal -= first.count
                day.removeFirst()
            }
        }
    }

    /// Counts a call by `caller` at `now` if it is within both limits.
    func admit(_ caller: String, now: Date) -> APILimitDecision {
        let time = now.timeIntervalSince1970
        return buckets.withLock { buckets in
            if buckets.count > 10_000 { buckets = buckets.filter { time - $0.value.last < 86_400 } }
            var bucket = buckets[caller] ?? Bucket()
            bucket.forget(before: time)
            defer { buckets[caller] = bucket }
            if bucket.minute.count >= perMinute, let oldest = bucket.minute.first {
                return .minuteLimit(perMinute, retryAfter: Self.seconds(until: oldest + 60, from: time))
            }
            if bucket.dayTotal >= perDay, let oldest = bucket.day.first {
                return .dayLimit(perDay, retryAfter: Self.seconds(until: Double(oldest.minute + 1) * 60 + 86_400, from: time))
            }
            bucket.minute.append(time)
            let minute = Int(time / 60)
            if let last = bucket.day.last, last.minute == minute {
                bucket.day[bucket.day.count - 1].count += 1
            } else {
                bucket.day.append((minute, 1))
            }
            bucket.dayTotal += 1
            bucket.last = time
            return .allowed
        }
    }

    private static func seconds(until end: Double, from now: Double) -> Int {
        max(1, Int((end - now).rounded(.up)))
    }
}
