public import AsyncHTTPClient
public import Foundation
import NIOCore
public import NIOHTTP1
import RelayCore

public import struct Foundation.Date

/// The relay's one outbound HTTP layer: the Rhea client, the council's model client and every
/// platform's REST client send through it.
///
/// It owns what every client needs and none should repeat: one shared `HTTPClient` with a pool
/// sized for load, one time limit for the whole exchange (head *and* body), one classification
/// of failures (`HTTPFailure`), and one `Retry-After` reading (`RetryAfter`). Typed clients sit on
/// top and map `HTTPFailure` to their own errors. It never retries: each client knows whether a
/// retry is safe.
public struct HTTPTransport: Sendable {
    /// The shared client; owned (and shut down) by whoever made it, never by the transport.
    public let client: HTTPClient

    public init(client: HTTPClient) {
        self.client = client
    }

    /// An `HTTPClient` for the relay; the caller owns it and must shut it down.
    ///
    /// - The pool holds `maxConnectionsPerHost` connections per host: replies and model calls
    ///   are slow (up to 90 s), and AsyncHTTPClient's default of 8 would cap a busy relay at a
    ///   few dozen replies a second. Slack, the backend and each model each get their own pool.
    /// - A connection attempt is not retried inside the pool: a refused connection should fail
    ///   in milliseconds and let the caller decide, not wait out the deadline.
    /// - Redirects are refused: they would carry credentials to wherever they point.
    public static func makeClient(maxConnectionsPerHost: Int = 256, connectTimeout: Duration = .seconds(5)) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, maxConnectionsPerHost))
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .milliseconds(Int64(max(1, (connectTimeout.seconds * 1000).rounded(.up))))
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// Runs `body` on a small transport of its own (a one-off command such as `rhea-relay
    /// register`), and shuts its client down after, whether `body` returned or threw.
    public static func withOwnClient<T: Sendable>(
        maxConnectionsPerHost: Int = 2, _ body: (HTTPTransport) async throws -> T
    ) async throws -> T {
        let client = makeClient(maxConnectionsPerHost: maxConnectionsPerHost)
        do {
            let result = try await body(HTTPTransport(client: client))
            try? await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// Sends `request` and reads the whole answer within `timeout`.
    ///
    /// AsyncHTTPClient's own deadline ends at the response head, so the exchange also runs under
    /// a time limit that bounds a server that sends its head and then stalls. Cancelling the
    /// calling task cancels the request (AsyncHTTPClient then closes the connection).
    ///
    /// - Returns: whatever status came back; `HTTPAnswer.requireSuccess()` turns a non-2xx into
    ///   `HTTPFailure.status`.
    /// - Throws: `HTTPFailure` for everything that produced no status.
    public func exchange(
        _ request: HTTPClientRequest, timeout: Duration, maxBodyBytes: Int = 4 * 1024 * 1024
    ) async throws(HTTPFailure) -> HTTPAnswer {
        if Task.isCancelled { throw .cancelled }
        let limit = timeout > .zero ? timeout : .milliseconds(1)
        let client = client
        let started = ContinuousClock.now
        // A little later than the time limit, so the limit decides and this is a safety net.
        let deadline = NIODeadline.now() + .milliseconds(Int64((limit.seconds * 1000).rounded(.up)) + 1000)
        do {
            return try await withTimeLimit(limit, on: client.eventLoopGroup.any()) {
                let response = try await client.execute(request, deadline: deadline)
                let body = try await response.body.collect(upTo: maxBodyBytes)
                return HTTPAnswer(
                    status: Int(response.status.code), headers: response.headers, body: Array(body.readableBytesView),
                    elapsed: started.duration(to: .now))
            }
        } catch {
            throw HTTPFailure.classify(error, timeout: limit, maxBodyBytes: maxBodyBytes)
        }
    }
}

/// A whole answer: its status, headers and body, and how long the exchange took.
public struct HTTPAnswer: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    public var elapsed: Duration

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = [], elapsed: Duration = .zero) {
        self.status = status
        self.headers = headers
        self.body = body
        self.elapsed = elapsed
    }

    /// A 2xx status.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The answer itself when its status is 2xx; `HTTPFailure.status` otherwise.
    public func requireSuccess() throws(HTTPFailure) -> HTTPAnswer {
        guard isSuccess else { throw .status(self) }
        return self
    }

    /// The `Retry-After` header, read and clamped (see `RetryAfter`); nil when absent or unreadable.
    public func retryAfter(now: Date = Date()) -> Duration? {
        RetryAfter.parse(headers.first(name: "Retry-After"), now: now)
    }
}

/// The time limit ran out before the whole answer arrived.
struct TimeLimitExceeded: Error {}

/// Runs `operation`, throwing `TimeLimitExceeded` (and cancelling it) after `limit`.
///
/// The limit is a timer on `eventLoop`, not `Task.sleep`, which goes through Dispatch's timer
/// thread and wakes on another thread (profiled: two such sleeps per command, with the context
/// switches they bring). Both run as children of one group, so whichever ends first cancels the
/// other. (Running the operation as an unstructured task cancelled by the timer instead made a
/// refused connection sometimes hang until the limit under load; the group does not.)
func withTimeLimit<T: Sendable>(
    _ limit: Duration, on eventLoop: any EventLoop, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            let timer = eventLoop.scheduleTask(in: TimeAmount(limit)) {}
            try await withTaskCancellationHandler {
                try await timer.futureResult.get()
            } onCancel: {
                timer.cancel()
            }
            throw TimeLimitExceeded()
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TimeLimitExceeded() }
        return first
    }
}

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
