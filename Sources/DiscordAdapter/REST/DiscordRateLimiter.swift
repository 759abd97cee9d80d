import RelayCore

public import struct Foundation.Date

/// The one rate limiter of the Discord REST client: asked before every request, told every
/// response, so the client never sends what Discord would refuse.
///
/// - **Buckets.** Each route (method + path template) learns its bucket from
///   `X-RateLimit-Bucket`; limits are counted per bucket and major parameter (channel, guild,
///   webhook id + token), from `X-RateLimit-Remaining` and `X-RateLimit-Reset-After`
///   (relative, so the local clock need not agree with Discord's). Requests already sent and
///   not yet answered are subtracted from what a response says remains.
/// - **Unknown buckets.** Until a route's first response, one request at a time goes out (a
///   probe); the others wait for what it teaches. A route whose responses carry no rate-limit
///   headers is limited only globally.
/// - **Global.** At most `globalLimit` requests (50 by default, Discord's per bot) in any
///   sliding `globalWindow` (1 s) widened by `globalMargin` (150 ms), except interaction
///   endpoints, which Discord exempts. Discord counts requests as they arrive, and on a busy
///   machine requests sent within the limit arrive bunched: the margin absorbs that jitter, at
///   the cost of a lower sustained rate (50 per 1.15 s), as Telegram's pacing does.
/// - **429.** `retry_after` from the JSON body (seconds, fractional), else `Retry-After`, blocks
///   the bucket, or every request when `global` is true; a 429 whose body is not JSON (a
///   Cloudflare block) blocks every request for `Retry-After` or a minute.
/// - Every number from Discord is untrusted: non-finite, negative or huge values are clamped
///   (`UntrustedNumber`) into `0…maximumWait`, so nothing traps, spins or waits for ever.
///
/// `acquire` returns how long to wait; zero means "send now", and counts the request. Pure and
/// synchronous: the client keeps it in one actor and passes `now` from its `RelayClock`.
public struct DiscordRateLimiter: Sendable {
    /// What the response means for the request that got it.
    public enum Verdict: Sendable, Hashable {
        /// Use the response.
        case proceed
        /// Discord refused it (429): send it again, no sooner than `after`; `global` when every
        /// request is held, not only this bucket.
        case retry(after: Duration, global: Bool)
    }

    /// Requests in any `globalWindow` (plus `globalMargin`), for routes not exempt.
    public let globalLimit: Int
    public let globalWindow: Duration
    /// Added to `globalWindow` for the jitter between sending and arrival.
    public let globalMargin: Duration
    /// How long to wait while a route's probe is out or a window's end is unknown.
    public let unknownWait: Duration
    /// The longest wait any number from Discord can cause.
    public let maximumWait: Duration
    /// The shortest wait after a 429, so a `retry_after` of 0 cannot make a tight loop.
    public let minimumRetry: Duration

    private var routeBuckets: [String: String] = [:]
    private var buckets: [String: Bucket] = [:]
    /// Send times of non-exempt requests in the last window (`globalWindow` + `globalMargin`), oldest first.
    private var globalSends: [Date] = []
    private var globalBlockedUntil: Date?

    /// Above this many buckets, idle ones are forgotten (they are learned again, by one probe).
    static let bucketCapacity = 4096

    public init(
        globalLimit: Int = 50, globalWindow: Duration = .seconds(1), globalMargin: Duration = .milliseconds(150),
        unknownWait: Duration = .milliseconds(100), maximumWait: Duration = .seconds(3600), minimumRetry: Duration = .milliseconds(100)
    ) {
        self.globalLimit = max(1, globalLimit)
        self.globalWindow = max(.milliseconds(1), globalWindow)
        self.globalMargin = max(.zero, globalMargin)
        self.unknownWait = max(.milliseconds(1), unknownWait)
        self.maximumWait = max(.seconds(1), maximumWait)
        self.minimumRetry = max(.zero, minimumRetry)
    }

    struct Bucket: Sendable {
        /// `X-RateLimit-Limit`, once known.
        var limit: Int?
        /// Requests still allowed in the current window, counting those sent since.
        var remaining = 0
        /// When the current window ends; nil when unknown.
        var resetAt: Date?
        /// Acquired and not yet recorded.
        var inFlight = 0
        /// A response with rate-limit headers has been seen.
        var known = false
        /// Responses carry no rate-limit headers: only the global limit applies.
        var unlimited = false
    }

    /// How long to wait before sending a request on `route`: zero means send now, and the
    /// request is counted (call `record` or `abandon` for it later); otherwise call again after
    /// that long.
    public mutating func acquire(_ route: DiscordRoute, now: Date) -> Duration {
        let key = bucketKey(route)
        var bucket = buckets[key] ?? Bucket()
        let wait = max(globalWait(route, now: now), bucketWait(&bucket, now: now))
        if wait > .zero {
            buckets[key] = bucket
            return wait
        }
        if bucket.known && !bucket.unlimited { bucket.remaining -= 1 }
        bucket.inFlight += 1
        buckets[key] = bucket
        if !route.exemptFromGlobalLimit { globalSends.append(now) }
        if buckets.count > Self.bucketCapacity { forgetIdleBuckets(now: now) }
        return .zero
    }

    /// Learns from the response to a request `acquire` let through, and says whether to use it
    /// or send the request again later.
    ///
    /// - Parameters:
    ///   - header: the response's header value for a name (case-insensitive), or nil.
    ///   - body: the response body (read only for a 429).
    public mutating func record(
        _ route: DiscordRoute, status: Int, header: (String) -> String?, body: some Collection<UInt8>, now: Date
    ) -> Verdict {
        var key = bucketKey(route)
        var bucket = buckets.removeValue(forKey: key) ?? Bucket()
        bucket.inFlight = max(0, bucket.inFlight - 1)

        // The route's bucket, learned (or changed): requests go on counting under it, shared
        // with the other routes in it.
        if let hash = header("X-RateLimit-Bucket").flatMap(Self.validBucketHash), routeBuckets[route.routeKey] != hash {
            routeBuckets[route.routeKey] = hash
            key = bucketKey(route)
            if var shared = buckets[key] {
                shared.inFlight += bucket.inFlight
                bucket = shared
            }
        }

        let limit = UntrustedNumber.checked(header("X-RateLimit-Limit").flatMap { Int($0) }, in: 1...1_000_000, source: "discord", field: "ratelimit_limit")
        let remaining = UntrustedNumber.checked(
            header("X-RateLimit-Remaining").flatMap { Int($0) }, in: 0...1_000_000, source: "discord", field: "ratelimit_remaining")
        let resetAfter = seconds(header("X-RateLimit-Reset-After"), field: "ratelimit_reset_after")

        if let remaining {
            // A window without a usable end is taken to end in a second, the shortest Discord uses.
            let resetAfter = resetAfter ?? .seconds(1)
            bucket.known = true
            bucket.unlimited = false
            bucket.limit = limit ?? bucket.limit
            let reset = now + resetAfter
            // Requests still out were sent after this one was counted: they will use up part of
            // what remains.
            let available = max(0, remaining - bucket.inFlight)
            if let current = bucket.resetAt, now < current, reset <= current + .milliseconds(250) {
                // The same window, possibly reported late: keep the lower count.
                bucket.remaining = min(bucket.remaining, available)
                bucket.resetAt = max(current, reset)
            } else {
                bucket.remaining = available
                bucket.resetAt = reset
            }
        } else if status != 429, !bucket.known {
            bucket.unlimited = true
        }

        guard status == 429 else {
            buckets[key] = bucket
            return .proceed
        }
        let verdict = rateLimited(header: header, body: body, now: now, resetAfter: resetAfter)
        if case .retry(let wait, global: false) = verdict {
            bucket.known = true
            bucket.unlimited = false
            bucket.remaining = 0
            bucket.resetAt = max(bucket.resetAt ?? now, now + wait)
        }
        buckets[key] = bucket
        return verdict
    }

    /// Gives back the count of a request that got no response (a network failure): it may or
    /// may not have reached Discord, so its place in the window stays used.
    public mutating func abandon(_ route: DiscordRoute, now: Date) {
        let key = bucketKey(route)
        guard var bucket = buckets[key] else { return }
        bucket.inFlight = max(0, bucket.inFlight - 1)
        buckets[key] = bucket
    }

    // MARK: - Waiting

    private mutating func globalWait(_ route: DiscordRoute, now: Date) -> Duration {
        guard !route.exemptFromGlobalLimit else { return .zero }
        var wait = Duration.zero
        if let until = globalBlockedUntil {
            if now < until { wait = until.duration(since: now) } else { globalBlockedUntil = nil }
        }
        let window = globalWindow + globalMargin
        let windowStart = now - window
        if let firstKept = globalSends.firstIndex(where: { $0 > windowStart }) {
            globalSends.removeFirst(firstKept)
        } else {
            globalSends.removeAll()
        }
        if globalSends.count >= globalLimit {
            // The oldest send leaves the window at `oldest + window`.
            let oldest = globalSends[globalSends.count - globalLimit]
            wait = max(wait, (oldest + window).duration(since: now))
        }
        return wait
    }

    private func bucketWait(_ bucket: inout Bucket, now: Date) -> Duration {
        if bucket.unlimited { return .zero }
        guard bucket.known else {
            // One probe at a time until the bucket is known.
            return bucket.inFlight > 0 ? unknownWait : .zero
        }
        if let reset = bucket.resetAt, now >= reset {
            // A new window: the whole limit again; its end comes with the next response.
            bucket.remaining = max(1, bucket.limit ?? 1)
            bucket.resetAt = nil
        }
        if bucket.remaining > 0 { return .zero }
        if let reset = bucket.resetAt { return max(.milliseconds(1), reset.duration(since: now)) }
        if bucket.inFlight == 0 {
            // Nothing out will say when the window ends (the requests failed): assume it ends soon.
            bucket.resetAt = now + unknownWait
        }
        return unknownWait
    }

    // MARK: - 429

    private mutating func rateLimited(header: (String) -> String?, body: some Collection<UInt8>, now: Date, resetAfter: Duration?) -> Verdict {
        let retryAfterHeader = seconds(header("Retry-After"), field: "retry_after_header")
        // A 429 without a JSON body comes from Cloudflare, not Discord's limiter: everything waits.
        guard body.count <= 65_536, let limited = try? PayloadDecoding.json(RateLimitedBody.self, from: body, as: "Discord 429") else {
            return blockEverything(for: clampRetry(retryAfterHeader ?? .seconds(60)), now: now)
        }
        let bodyRetry = limited.retryAfter.flatMap { seconds(raw: $0, field: "retry_after") }
        let wait = clampRetry(bodyRetry ?? retryAfterHeader ?? resetAfter ?? .seconds(1))
        let global = limited.global == true || header("X-RateLimit-Global")?.lowercased() == "true"
        return global ? blockEverything(for: wait, now: now) : .retry(after: wait, global: false)
    }

    /// Holds every non-exempt request for `wait`, or longer when an earlier block lasts longer.
    private mutating func blockEverything(for wait: Duration, now: Date) -> Verdict {
        let until = max(globalBlockedUntil ?? now, now + wait)
        globalBlockedUntil = until
        return .retry(after: until.duration(since: now), global: true)
    }

    private func clampRetry(_ wait: Duration) -> Duration {
        min(maximumWait, max(minimumRetry, wait))
    }

    // MARK: - Keys and numbers

    private func bucketKey(_ route: DiscordRoute) -> String {
        (routeBuckets[route.routeKey].map { "bucket:" + $0 } ?? "route:" + route.routeKey) + "|" + route.majorParameter
    }

    /// Discord's bucket ids are short opaque strings; anything else is ignored.
    private static func validBucketHash(_ value: String) -> String? {
        guard (1...128).contains(value.utf8.count), value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        return value
    }

    /// Seconds from a header, clamped into `0…maximumWait`; nil when absent or not a number.
    private func seconds(_ value: String?, field: String) -> Duration? {
        guard let value, let number = Double(value.trimmingASCIISpaces()) else { return nil }
        return seconds(raw: number, field: field)
    }

    private func seconds(raw: Double, field: String) -> Duration? {
        guard let clamped = UntrustedNumber.clamped(raw, to: 0...maximumWait.seconds, source: "discord", field: field) else { return nil }
        return Duration.clampedSeconds(clamped, maximum: maximumWait)
    }

    private mutating func forgetIdleBuckets(now: Date) {
        buckets = buckets.filter { _, bucket in bucket.inFlight > 0 || (bucket.resetAt.map { $0 > now } ?? false) }
    }
}

extension String {
    fileprivate func trimmingASCIISpaces() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let start = firstIndex { !isSpace($0) } ?? endIndex
        let end = lastIndex { !isSpace($0) }.map { index(after: $0) } ?? start
        return self[start..<end]
    }
}

/// A 429's body from Discord's own limiter: `{"message": …, "retry_after": 0.5, "global": false}`.
private struct RateLimitedBody: Decodable {
    var retryAfter: Double?
    var global: Bool?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        retryAfter = container.lenient(Double.self, "retry_after")
        global = container.lenient(Bool.self, "global")
    }
}
