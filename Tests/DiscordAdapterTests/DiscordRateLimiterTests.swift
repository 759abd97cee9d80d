import Foundation
import RelayCore
import Testing

@testable import DiscordAdapter

@Suite("Discord REST rate limiter")
struct DiscordRateLimiterTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let channel = DiscordRoute.createMessage(channelID: "111")

    static func headers(_ values: [String: String]) -> (String) -> String? {
        let lowered = Dictionary(uniqueKeysWithValues: values.map { ($0.key.lowercased(), $0.value) })
        return { lowered[$0.lowercased()] }
    }

    static func limited(bucket: String = "abc", remaining: Int, resetAfter: String, limit: Int = 5) -> (String) -> String? {
        headers(["X-RateLimit-Bucket": bucket, "X-RateLimit-Limit": "\(limit)", "X-RateLimit-Remaining": "\(remaining)", "X-RateLimit-Reset-After": resetAfter])
    }

    @Test func anUnknownRouteSendsOneProbeThenFollowsWhatItLearns() {
        var limiter = DiscordRateLimiter()
        let now = Self.start
        #expect(limiter.acquire(Self.channel, now: now) == .zero)
        #expect(limiter.acquire(Self.channel, now: now) == .milliseconds(100), "the probe is still out")
        #expect(limiter.record(Self.channel, status: 200, header: Self.limited(remaining: 1, resetAfter: "2.5"), body: [], now: now) == .proceed)
        #expect(limiter.acquire(Self.channel, now: now) == .zero)
        #expect(limiter.acquire(Self.channel, now: now) == .milliseconds(2500), "none left until the window ends")
        #expect(limiter.acquire(Self.channel, now: now + .seconds(2.5)) == .zero)
        // Another channel is another bucket.
        #expect(limiter.acquire(.createMessage(channelID: "222"), now: now) == .zero)
    }

    /// Fifty a second, in a window widened by 150 ms: requests sent within the limit that
    /// arrive bunched (a busy machine, the network) still keep it as Discord counts them.
    @Test func theGlobalLimitKeepsAMarginForJitter() {
        var limiter = DiscordRateLimiter()
        let route = DiscordRoute.gatewayBot
        // Its answers carry no rate-limit headers: only the global limit applies to it.
        #expect(limiter.acquire(route, now: Self.start) == .zero)
        #expect(limiter.record(route, status: 200, header: Self.headers([:]), body: [], now: Self.start) == .proceed)
        for _ in 1..<50 { #expect(limiter.acquire(route, now: Self.start) == .zero) }
        // Dates keep microseconds, not nanoseconds.
        func about(_ wait: Duration, _ expected: Duration) -> Bool { abs((wait - expected) / .milliseconds(1)) < 0.01 }
        #expect(about(limiter.acquire(route, now: Self.start), .milliseconds(1150)))
        #expect(about(limiter.acquire(route, now: Self.start + .seconds(1)), .milliseconds(150)), "a second is not enough")
        #expect(limiter.acquire(route, now: Self.start + .milliseconds(1150)) == .zero)
        // Interaction webhooks are exempt.
        #expect(limiter.acquire(.editOriginalResponse(applicationID: "1", token: "t"), now: Self.start) == .zero)
    }

    @Test func requestsStillInFlightCountAgainstWhatARespondedOneSaysRemains() {
        var limiter = DiscordRateLimiter()
        let now = Self.start
        _ = limiter.acquire(Self.channel, now: now)
        _ = limiter.record(Self.channel, status: 200, header: Self.limited(remaining: 4, resetAfter: "5"), body: [], now: now)
        for _ in 0..<4 { #expect(limiter.acquire(Self.channel, now: now) == .zero) }
        #expect(limiter.acquire(Self.channel, now: now) > .zero)
        // The first of the four answers "3 remain" — but three more are still out.
        _ = limiter.record(Self.channel, status: 200, header: Self.limited(remaining: 3, resetAfter: "5"), body: [], now: now + .milliseconds(50))
        #expect(limiter.acquire(Self.channel, now: now + .milliseconds(60)) > .zero)
    }

    @Test func a429WithRetryAfterBlocksTheBucketOrEverything() {
        var limiter = DiscordRateLimiter()
        let now = Self.start
        _ = limiter.acquire(Self.channel, now: now)
        let body = Array(#"{"message":"You are being rate limited.","retry_after":1.5,"global":false}"#.utf8)
        #expect(
            limiter.record(Self.channel, status: 429, header: Self.limited(remaining: 0, resetAfter: "1.5"), body: body, now: now)
                == .retry(after: .seconds(1.5), global: false))
        #expect(limiter.acquire(Self.channel, now: now) == .seconds(1.5))
        #expect(limiter.acquire(.createMessage(channelID: "222"), now: now) == .zero, "other channels go on")

        let other = DiscordRoute.createMessage(channelID: "222")
        let global = Array(#"{"message":"You are being rate limited.","retry_after":0.75,"global":true}"#.utf8)
        #expect(
            limiter.record(other, status: 429, header: Self.headers(["X-RateLimit-Global": "true", "Retry-After": "1"]), body: global, now: now)
                == .retry(after: .milliseconds(750), global: true))
        #expect(limiter.acquire(.createMessage(channelID: "333"), now: now) == .milliseconds(750))
        // Interaction endpoints are not bound to the global limit.
        #expect(limiter.acquire(.editOriginalResponse(applicationID: "1", token: "t"), now: now) == .zero)
        #expect(limiter.acquire(.createMessage(channelID: "333"), now: now + .milliseconds(750)) == .zero)
    }

    @Test func aCloudflare429WithoutJSONHoldsEverything() {
        var limiter = DiscordRateLimiter()
        _ = limiter.acquire(Self.channel, now: Self.start)
        #expect(
            limiter.record(Self.channel, status: 429, header: Self.headers([:]), body: Array("<html>banned</html>".utf8), now: Self.start)
                == .retry(after: .seconds(60), global: true))
        _ = limiter.acquire(Self.channel, now: Self.start)
        #expect(
            limiter.record(Self.channel, status: 429, header: Self.headers(["Retry-After": "7"]), body: [], now: Self.start)
                == .retry(after: .seconds(60), global: true), "the longer block stays")
        #expect(limiter.acquire(.gatewayBot, now: Self.start + .seconds(59)) == .seconds(1))
    }

    @Test func hostileNumbersAreClamped() {
        UntrustedNumber.$observer.withValue(UntrustedNumber.Observer { _ in }) {
            for (raw, expected) in [
                ("-1", Duration.milliseconds(100)), ("0", .milliseconds(100)), ("1e300", .seconds(3600)), ("\"x\"", .seconds(2)), ("null", .seconds(2)),
            ] {
                var limiter = DiscordRateLimiter()
                _ = limiter.acquire(Self.channel, now: Self.start)
                let body = Array(#"{"retry_after":\#(raw),"global":false}"#.utf8)
                let verdict = limiter.record(Self.channel, status: 429, header: Self.headers(["Retry-After": "2"]), body: body, now: Self.start)
                #expect(verdict == .retry(after: expected, global: false), "retry_after \(raw)")
            }
            for raw in ["inf", "-inf", "nan", "-3", "99999999999", "", "1,5"] {
                var limiter = DiscordRateLimiter()
                _ = limiter.acquire(Self.channel, now: Self.start)
                _ = limiter.record(Self.channel, status: 200, header: Self.limited(remaining: 0, resetAfter: raw), body: [], now: Self.start)
                let wait = limiter.acquire(Self.channel, now: Self.start)
                #expect(wait >= .zero && wait <= .seconds(3600), "reset-after \(raw) → \(wait)")
            }
        }
    }

    @Test func routesWithoutRateLimitHeadersAreLimitedOnlyGlobally() {
        var limiter = DiscordRateLimiter()
        _ = limiter.acquire(.gatewayBot, now: Self.start)
        _ = limiter.record(.gatewayBot, status: 200, header: Self.headers([:]), body: [], now: Self.start)
        for _ in 0..<10 { #expect(limiter.acquire(.gatewayBot, now: Self.start) == .zero) }
    }

    @Test func routesInTheSameBucketShareItsCount() {
        var limiter = DiscordRateLimiter()
        let edit = DiscordRoute.editMessage(channelID: "111", messageID: "9")
        _ = limiter.acquire(Self.channel, now: Self.start)
        _ = limiter.record(Self.channel, status: 200, header: Self.limited(bucket: "shared", remaining: 1, resetAfter: "3"), body: [], now: Self.start)
        _ = limiter.acquire(edit, now: Self.start)
        _ = limiter.record(edit, status: 200, header: Self.limited(bucket: "shared", remaining: 0, resetAfter: "3"), body: [], now: Self.start)
        #expect(limiter.acquire(Self.channel, now: Self.start) == .seconds(3))
        #expect(limiter.acquire(edit, now: Self.start) == .seconds(3))
    }

    @Test func theRouteDescriptionNeverShowsAnInteractionToken() {
        let route = DiscordRoute.createFollowup(applicationID: "1", token: "secret-interaction-token")
        #expect(!"\(route)".contains("secret"))
        #expect(route.path == "/webhooks/1/secret-interaction-token")
    }

    /// A simulated Discord with per-channel buckets (5 per 2 s, fixed windows) and the global
    /// 50 per second, answering after 40 ms; 400 messages to 20 channels, and 60 requests to an
    /// unlimited route, all as fast as the limiter allows. Discord never has to refuse one, and
    /// no second ever holds more than 50.
    @Test func underLoadNothingIsEverExceeded() {
        struct Window {
            var start: Date
            var count: Int
        }
        struct Pending {
            var route: DiscordRoute
            var wakeAt: Date
        }
        var limiter = DiscordRateLimiter()
        var now = Self.start
        var pending = (0..<400).map { Pending(route: .createMessage(channelID: "\(1000 + $0 % 20)"), wakeAt: Self.start) }
        pending += (0..<60).map { _ in Pending(route: .gatewayBot, wakeAt: Self.start) }
        var responses: [(at: Date, route: DiscordRoute, status: Int, headers: [String: String])] = []
        var windows: [String: Window] = [:]
        var sent: [Date] = []
        var refused = 0
        var steps = 0
        while !pending.isEmpty || !responses.isEmpty, steps < 100_000 {
            steps += 1
            for response in responses.filter({ $0.at <= now }) {
                let verdict = limiter.record(response.route, status: response.status, header: Self.headers(response.headers), body: [], now: now)
                #expect(verdict == .proceed)
            }
            responses.removeAll { $0.at <= now }
            var waiting: [Pending] = []
            for var request in pending {
                guard request.wakeAt <= now else {
                    waiting.append(request)
                    continue
                }
                let wait = limiter.acquire(request.route, now: now)
                if wait > .zero {
                    request.wakeAt = now + wait
                    waiting.append(request)
                    continue
                }
                // Discord's side.
                sent.append(now)
                guard request.route.template.hasPrefix("/channels") else {
                    responses.append((now + .milliseconds(40), request.route, 200, [:]))
                    continue
                }
                var window = windows[request.route.majorParameter] ?? Window(start: now, count: 0)
                if now >= window.start + .seconds(2) { window = Window(start: now, count: 0) }
                window.count += 1
                windows[request.route.majorParameter] = window
                if window.count > 5 { refused += 1 }
                let resetAfter = (window.start + .seconds(2)).timeIntervalSince(now)
                responses.append(
                    (
                        now + .milliseconds(40), request.route, 200,
                        [
                            "X-RateLimit-Bucket": "msg", "X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "\(max(0, 5 - window.count))",
                            "X-RateLimit-Reset-After": String(format: "%.3f", resetAfter),
                        ]
                    ))
            }
            pending = waiting
            now = now + .milliseconds(5)
        }
        #expect(pending.isEmpty && sent.count == 460)
        #expect(refused == 0)
        var busiest = 0
        for (index, time) in sent.enumerated() {
            busiest = max(busiest, sent[index...].prefix { $0 < time + .seconds(1) }.count)
        }
        #expect(busiest <= 50)
        #expect(busiest >= 40, "the limit is used, not merely respected")
    }
}
