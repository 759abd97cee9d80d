import AsyncHTTPClient
import RelayCore
import RelayTestSupport
import SlackAdapter
import Synchronization
import Testing

/// The fakes, a Socket Mode client running against them, and what its handler received.
struct SocketModeHarness {
    let web: FakeSlackWebAPI
    let socketMode: FakeSocketModeServer
    let client: SocketModeClient
    let received: EnvelopeRecorder
    let logs: LogCapture
    let run: Task<Void, any Error>
}

/// An `app_mention` in an `events_api` envelope, as Slack sends it over Socket Mode; the text
/// mentions the fake's bot.
func mentionEnvelope(_ envelopeID: String, eventID: String, text: String = "<@U0FAKEBOT> hello", retryAttempt: Int = 0) -> JSONValue {
    SlackPayloads.socketModeEnvelope(
        type: "events_api", envelopeID: envelopeID,
        payload: SlackPayloads.appMention(text: text, eventID: eventID, botUserID: FakeSlackWebAPI.botUserID),
        retryAttempt: retryAttempt)
}

/// Fast timings so reconnects take milliseconds, not seconds.
let fastSocketMode = SocketModeClient.Configuration(
    backoff: Backoff(initial: .milliseconds(50), multiplier: 2, maximum: .milliseconds(200), jitter: 0.5),
    // No test waits for the hello timeout to fire but the one that sets its own; 30 s keeps a
    // loaded machine from replacing a connection whose hello is on its way.
    healthyUptime: .seconds(30), helloTimeout: .seconds(30), pingInterval: .seconds(5), closeTimeout: .seconds(2))

/// Starts both fakes and a running client, runs `body`, then stops the client (waiting for
/// `run()` to return) and the fakes, and checks no credential was logged.
///
/// - Parameters:
///   - handler: what the client's handler does after recording the envelope; its answer is
///     whether the envelope is acknowledged.
func withSocketMode<T>(
    configuration: SocketModeClient.Configuration = fastSocketMode,
    clock: any RelayClock = SystemClock(),
    prepare: (FakeSlackWebAPI, FakeSocketModeServer) -> Void = { _, _ in },
    handler: @escaping @Sendable (SocketModeEnvelope) async -> Bool = { _ in true },
    isolation: isolated (any Actor)? = #isolation,
    _ body: (SocketModeHarness) async throws -> T
) async throws -> T {
    try await withFakeSocketModeServer { socketMode in
        try await withSlackWeb(socketMode: socketMode) { web in
            prepare(web.fake, socketMode)
            let received = EnvelopeRecorder()
            let client = SocketModeClient(
                appToken: web.fake.appToken, web: web.client, configuration: configuration, clock: clock, logger: web.logs.logger
            ) { envelope in
                received.record(envelope)
                return await handler(envelope)
            }
            let run = Task { try await client.run() }
            let harness = SocketModeHarness(
                web: web.fake, socketMode: socketMode, client: client, received: received, logs: web.logs, run: run)
            do {
                let result = try await body(harness)
                client.stop()
                try await run.value
                #expect(!web.logs.text.contains("ticket="), "a connection URL was logged")
                return result
            } catch {
                run.cancel()
                _ = await run.result
                throw error
            }
        }
    }
}

/// Envelopes a handler received, with continuation-based waiting.
final class EnvelopeRecorder: Sendable {
    private struct Waiter {
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private let state = Mutex<(envelopes: [SocketModeEnvelope], waiters: [Waiter])>(([], []))

    var envelopes: [SocketModeEnvelope] { state.withLock { $0.envelopes } }
    var ids: [String] { envelopes.map(\.envelopeID) }

    func record(_ envelope: SocketModeEnvelope) {
        let ready = state.withLock { state -> [Waiter] in
            state.envelopes.append(envelope)
            let count = state.envelopes.count
            let ready = state.waiters.filter { $0.count <= count }
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Waits until `count` envelopes have arrived; returns them all.
    @discardableResult
    func wait(count: Int, timeout: Double = 30) async throws -> [SocketModeEnvelope] {
        let arrived = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.state.withLock { state -> Bool in
                        if state.envelopes.count >= count { return true }
                        state.waiters.append(Waiter(count: count, continuation: continuation))
                        return false
                    }
                    if now { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return false
            }
            let first = await group.next() ?? false
            if !first {
                // Release the waiter so the group can end.
                let stale = state.withLock { state -> [Waiter] in
                    let stale = state.waiters.filter { $0.count == count }
                    state.waiters.removeAll { $0.count == count }
                    return stale
                }
                for waiter in stale { waiter.continuation.resume() }
            }
            group.cancelAll()
            return first
        }
        guard arrived else {
            throw EnvelopeTimeout(count: count, seen: ids)
        }
        return envelopes
    }
}

struct EnvelopeTimeout: Error, CustomStringConvertible {
    let count: Int
    let seen: [String]
    var description: String { "timed out waiting for \(count) envelope(s); handler saw \(seen)" }
}
