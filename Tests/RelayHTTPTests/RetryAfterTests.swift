import Foundation
import RelayHTTP
import Testing

@Suite("Retry-After, read and clamped")
struct RetryAfterTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example date.
    static let example = Date(timeIntervalSince1970: 784_111_777)

    @Test(arguments: [
        ("120", Duration.seconds(120)), ("0", .zero), (" 7 ", .seconds(7)), ("1.5", .milliseconds(1500)),
        // Negative means "now"; absurd values stop at 15 minutes.
        ("-3", .zero), ("1e300", .seconds(900)), ("99999999999999999999999", .seconds(900)), ("901", .seconds(900)),
    ])
    func secondsAreReadAndClamped(header: String, expected: Duration) {
        #expect(RetryAfter.parse(header, now: Self.example) == expected)
    }

    @Test(arguments: ["nan", "inf", "-inf", "soon", "", "12 seconds", "Sun, 32 Nov 1994 08:49:37 GMT"])
    func unreadableHeadersAreIgnored(header: String) {
        #expect(RetryAfter.parse(header, now: Self.example) == nil)
    }

    @Test func anAbsentHeaderIsIgnored() {
        #expect(RetryAfter.parse(nil) == nil)
    }

    @Test(arguments: ["Sun, 06 Nov 1994 08:51:07 GMT", "Sunday, 06-Nov-94 08:51:07 GMT", "Sun Nov  6 08:51:07 1994"])
    func httpDatesInEachFormCountFromNow(header: String) {
        #expect(RetryAfter.parse(header, now: Self.example) == .seconds(90))
    }

    @Test func aDateInThePastMeansNowAndOneFarAheadStopsAtFifteenMinutes() {
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", now: Self.example) == .zero)
        #expect(RetryAfter.parse("Fri, 31 Dec 9999 23:59:59 GMT", now: Self.example) == .seconds(900))
    }

    @Test func jsonValuesAreClampedTheSameWay() {
        #expect(RetryAfter.clamp(seconds: 2.5) == .milliseconds(2500))
        #expect(RetryAfter.clamp(seconds: -1) == .zero)
        #expect(RetryAfter.clamp(seconds: 1e18) == .seconds(900))
        #expect(RetryAfter.clamp(seconds: .nan) == nil)
        #expect(RetryAfter.clamp(seconds: .infinity) == nil)
    }
}
