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

    func stop() async {
        stopFlag.raise()
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}
