import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// Cuts a fake's delayed answers short when the fake stops.
final class FakeStopFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    func raise() { raised.store(true, ordering: .releasing) }

    /// Waits `seconds`, or throws `CancellationError` as soon as the fake stops.
    func delay(_ seconds: Double) async throws {
        let end = ContinuousClock.now.advanced(by: .seconds(max(0, seconds)))
        while ContinuousClock.now < end {
            if raised.load(ordering: .acquiring) { throw CancellationError() }
            try await Task.sleep(for: min(.milliseconds(20), ContinuousClock.now.duration(to: end)))
        }
    }
}

/// A fake's running Hummingbird server, stopped gracefully.
///
/// Cancelling a Hummingbird server task while connections are still open can trap inside NIO
/// ("Deinited NIOAsyncWriter without calling finish()"), which ends the whole test process.
/// So `stop()` first cuts every delayed answer short, then shuts the server down gracefully
/// and waits until the port is closed.
final class FakeServerHandle: Sendable {
    let task: Task<Void, any Error>
    private let group: ServiceGroup
    private let stopFlag: FakeStopFlag

    init(app: some ApplicationProtocol, stopFlag: FakeStopFlag, onExit: @escaping @Sendable () -> Void) {
        let group = ServiceGroup(
            configuration: .init(services: [app], logger: Logger(label: "fake", factory: { _ in SwiftLogNoOpLogHandler() })))
        self.group = group
        self.stopFlag = stopFlag
        self.task = Task {
            defer { onExit() }
            try await group.run()
        }
    }

    /// Starts `responder` on an ephemeral 127.0.0.1 port; returns once it accepts connections.
    static func start(
        responder: some HTTPResponder<BasicRequestContext>, stopFlag: FakeStopFlag, logger: Logger
    ) async throws -> (FakeServerHandle, port: Int) {
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            responder: responder,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger)
        // If binding fails, finishing the stream makes `start` throw instead of hang.
        let server = FakeServerHandle(app: app, stopFlag: stopFlag) { portContinuation.finish() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            server.task.cancel()
            var reason = "the server stopped before it was listening"
            if case .failure(let error) = await server.task.result { reason = "\(error)" }
            throw FakeServerError.didNotStart(reason: reason)
        }
        return (server, port)
    }

    func stop() async {
        stopFlag.raise()
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}
