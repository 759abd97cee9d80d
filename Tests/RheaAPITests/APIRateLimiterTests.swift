import Foundation
import Testing

@testable import RheaAPI

/// The served API's per-caller limits on the clock the caller hands in: every window edge and
/// every `Retry-After` to the second, whatever the machine's load. (`serve`'s own tests check
/// that a refusal becomes a 429 with the header.)
@Suite("Rhea API: rate limits")
struct APIRateLimiterTests {
    /// A whole minute, so the day's per-minute buckets start where the calls do.
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

    @Test func theMinuteSlidesAndARefusalSaysWhenTheOldestCallLeavesIt() {
        let limiter = APIRateLimiter(perMinute: 2, perDay: 1000)
        #expect(limiter.admit("key", now: Self.at(0)) == .allowed)
        #expect(limiter.admit("key", now: Self.at(1)) == .allowed)
        #expect(limiter.admit("key", now: Self.at(2)) == .minuteLimit(2, retryAfter: 58))
        #expect(limiter.admit("key", now: Self.at(59.5)) == .minuteLimit(2, retryAfter: 1), "never 0: a client would come straight back")
        // Refusals are not counted: the first call leaves the window at 60 s, the second at 61 s.
        #expect(limiter.admit("key", now: Self.at(60.001)) == .allowed)
        #expect(limiter.admit("key", now: Self.at(60.5)) == .minuteLimit(2, retryAfter: 1))
        #expect(limiter.admit("key", now: Self.at(61.001)) == .allowed)
    }

    @Test func eachCallerHasABucketOfItsOwn() {
        let limiter = APIRateLimiter(perMinute: 1, perDay: 1000)
        #expect(limiter.admit("key", now: Self.at(0)) == .allowed)
        #expect(limiter.admit("key", now: Self.at(1)) == .minuteLimit(1, retryAfter: 59))
        #expect(limiter.admit("token:7", now: Self.at(1)) == .allowed)
    }

    @Test func theDayCountsByMinuteAndFreesTheOldestMinuteFirst() {
        let limiter = APIRateLimiter(perMinute: 100, perDay: 3)
        for seconds in [0.0, 3_600, 7_200] { #expect(limiter.admit("key", now: Self.at(seconds)) == .allowed) }
        // The oldest call's minute (0–60 s) leaves the day at 86 460 s.
        #expect(limiter.admit("key", now: Self.at(7_300)) == .dayLimit(3, retryAfter: 86_460 - 7_300))
        #expect(limiter.admit("key", now: Self.at(86_459)) == .dayLimit(3, retryAfter: 1))
        #expect(limiter.admit("key", now: Self.at(86_460)) == .allowed)
        #expect(limiter.admit("key", now: Self.at(86_461)) == .dayLimit(3, retryAfter: 3_600 + 60 + 86_400 - 86_461))
    }

    @Test func limitsBelowOneCountAsOne() {
        let limiter = APIRateLimiter(perMinute: 0, perDay: -5)
        #expect(limiter.admit("key", now: Self.at(0)) == .allowed)
        #expect(limiter.admit("key", now: Self.at(1)) == .minuteLimit(1, retryAfter: 59))
    }
}
