public import AsyncHTTPClient
import NIOCore

extension RheaTribunalClient {
    /// An `HTTPClient` suited to the gateway; the caller owns it and must shut it down.
    ///
    /// - The default pool of 8 connections per host would queue the ninth concurrent
    ///   tribunal call behind calls that take up to 90 s.
    /// - Connection attempts are not retried inside the pool: the client retries with its own
    ///   backoff, and a refused connection should fail in milliseconds, not at the deadline.
    public static func makeHTTPClient(maxConnectionsPerHost: Int = 64, connectTimeout: Double = 5) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, maxConnectionsPerHost))
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .milliseconds(Int64((connectTimeout * 1000).rounded(.up)))
        // Redirects would resend credentials to wherever they point; the gateway sends none.
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }
}
