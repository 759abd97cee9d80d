public import Logging
public import RelayCore
import ServiceLifecycle

/// How a session on a socket a platform keeps open ended (IRC's, XMPP's): a refused password
/// is reported and waited out longer; anything else reconnects.
public protocol SessionEnding: Error, CustomStringConvertible {
    /// The server's reason for refusing the credentials; nil for any other end.
    var refusedCredentials: String? { get }
}

/// The one reconnect loop of the socket platforms: runs `session` until cancelled or shut down,
/// reconnecting after `backoff` (reset after a session that lasted a minute); a graceful shutdown
/// calls `onGracefulShutdown` (a goodbye on the socket) and ends the loop once the session does.
/// A refused password is reported for `/readyz` under `credential` and waits six backoff steps.
public func runReconnecting(
    platform: String, credential: String, backoff initial: Backoff, clock: any RelayClock, credentials: CredentialReporter, logger: Logger,
    session: @Sendable () async throws -> Void, onGracefulShutdown: @escaping @Sendable () -> Void
) async {
    var backoff = initial
    while !Task.isCancelled && !Task.isShuttingDownGracefully {
        let started = clock.now
        do {
            try await withGracefulShutdownHandler {
                try await session()
            } onGracefulShutdown: {
                onGracefulShutdown()
            }
        } catch let ending as any SessionEnding {
            if Task.isShuttingDownGracefully {
                logger.info("\(platform): disconnected for the shutdown", metadata: ["reason": "\(ending)"])
                return
            }
            if let reason = ending.refusedCredentials {
                credentials.refused(credential, reason: reason)
                backoff.skip(6)
            }
            logger.warning("\(platform): the connection ended; reconnecting", metadata: ["reason": "\(ending)"])
        } catch {
            if Task.isCancelled { return }
            logger.warning("\(platform): the connection ended; reconnecting", metadata: ["error": "\(error)"])
        }
        if Task.isShuttingDownGracefully { return }
        if clock.now.duration(since: started) > .seconds(60) { backoff.reset() }
        let delay = backoff.next()
        try? await cancelWhenGracefulShutdown { [clock] in try await clock.sleep(for: delay) }
    }
}
