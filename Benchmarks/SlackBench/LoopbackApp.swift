import BenchSupport
import Hummingbird
import Logging

/// Runs `router` as an HTTP server on a free loopback port, in the background: the port, and the
/// task to cancel to stop it. `name` says which server did not start.
func startLoopbackApp(_ router: Router<BasicRequestContext>, name: String, logger: Logger) async throws -> (port: Int, task: Task<Void, any Error>) {
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
        onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        }, logger: logger)
    let task = Task { try await app.runService(gracefulShutdownSignals: []) }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next(), port > 0 else { throw BenchError("the \(name) did not start") }
    return (port, task)
}

/// A platform's own server that a relay talks to during a run (a fake Bot API, a homeserver):
/// what the relay is started with to reach it, and a line about what it saw.
protocol PlatformPeer: Sendable {
    /// The relay's environment for this server.
    var environment: [String: String] { get }
    /// What the server saw, for the run's line; nil when nothing to say.
    var summary: String? { get }
    /// Waits (bounded) until the relay is connected to it, so no command of the run arrives
    /// before the relay listens; at once for a server the relay only calls.
    func connected() async
    func stop() async
}

extension PlatformPeer {
    func connected() async {}
}

/// A chat server the relay keeps one connection to (IRC, XMPP), which the bench's people type
/// at: no acknowledgement comes, the line or stanza is written, or lost with no relay connected.
protocol SocketPeer: PlatformPeer {
    /// Command `index` from user `user`; false when no relay is connected to take it.
    func post(_ index: Int, user: Int) -> Bool
}
