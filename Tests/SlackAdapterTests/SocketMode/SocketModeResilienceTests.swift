import Foundation
import RelayCore
import RelayTestSupport
import SlackAdapter
import Testing

/// Issue 9, point 10: a server that sends `disconnect` right after every `hello` gets one prompt
/// refresh, then reconnections spaced by the growing, jittered backoff; a connection that
/// delivers events is healthy and refreshes at once. Time is a `ManualClock`: no reconnection can happen unless the test
/// moves time past its delay.
@Suite("Socket Mode: disconnects back off")
struct SocketModeDisconnectBackoffTests {
    /// 1, 2, 4, 8 s before jitter (each between half and all of it); timers that must not fire
    /// while the test advances the clock (a few seconds at a time) are long.
    static let configuration = SocketModeClient.Configuration(
        backoff: Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(8), jitter: 0.5),
        healthyUptime: .seconds(60), helloTimeout: .seconds(600), pingInterval: .seconds(5), closeTimeout: .seconds(2))

    /// The delays the client announced ("Socket Mode reconnecting after a delay"), in order.
    static func delays(in logs: LogCapture) -> [Double] {
        logs.text.split(separator: "\n").filter { $0.contains("reconnecting after a delay") }.compactMap { line in
            guard let range = line.range(of: #""slack.delay": "#) else { return nil }
            let rest = line[range.upperBound...]
            return Double(rest.prefix { !$0.isWhitespace })
        }
    }

    @Test func disconnectsAfterEveryHelloAreSpacedByTheGrowingJitteredBackoffUntilAConnectionIsHealthy() async throws {
        let clock = ManualClock()
        try await withSocketMode(configuration: Self.configuration, clock: clock) { harness in
            let socketMode = harness.socketMode
            try await socketMode.waitForConnections(count: 1)

            // The first disconnect refreshes at once: no time passes.
            try await socketMode.sendDisconnect(reason: "refresh_requested", to: 1)
            try await socketMode.waitForConnections(count: 2)
            #expect(Self.delays(in: harness.logs).isEmpty)

            // Every later one waits: 1, 2, 4, 8 s, each jittered into its upper half.
            var announced: [Double] = []
            for (round, base) in [1.0, 2, 4, 8].enumerated() {
                let current = 2 + round
                try await socketMode.sendDisconnect(reason: "warning", to: current)
                try await eventually("delay \(round + 1) announced") { Self.delays(in: harness.logs).count == round + 1 }
                let delay = try #require(Self.delays(in: harness.logs).last)
                #expect(delay >= base * 0.5 && delay <= base, "delay \(delay) s outside [\(base / 2), \(base)]")
                announced.append(delay)

                // Each connection holds a hello-timeout and a healthy-uptime timer; the retry
                // timer is the one more: once it sleeps, time may move.
                await clock.waitForSleepers(2 * current + 1)
                #expect(socketMode.connectionCount == current, "reconnected before the delay passed")
                clock.advance(by: .milliseconds(Int64((delay * 1000).rounded(.up))))
                try await socketMode.waitForConnections(count: current + 1)
            }
            #expect(announced == announced.sorted() || announced.count < 2, "delays do not grow: \(announced)")
            #expect(harness.web.requests(path: "apps.connections.open").count == 6)
            // That a connection up past healthyUptime starts the backoff over is decided by the
            // state machine and checked there (SocketModeStateMachineTests); done here with the
            // manual clock, the uptime timer raced the test's steps.
        }
    }

    @Test func aConnectionThatDeliversEventsIsHealthy() async throws {
        let clock = ManualClock()
        try await withSocketMode(configuration: Self.configuration, clock: clock) { harness in
            let socketMode = harness.socketMode
            try await socketMode.waitForConnections(count: 1)
            try await socketMode.sendDisconnect(to: 1)  // the one prompt refresh
            try await socketMode.waitForConnections(count: 2)

            // Connection 2 delivers an event: its disconnect is a real refresh, not a loop.
            try await socketMode.send(json: mentionEnvelope("env-1", eventID: "Ev1"), to: 2)
            try await harness.received.wait(count: 1)
            try await socketMode.sendDisconnect(to: 2)
            try await socketMode.waitForConnections(count: 3)
            #expect(Self.delays(in: harness.logs).isEmpty)
        }
    }
}

@Suite("Socket Mode: hostile numbers in frames")
struct SocketModeHostileNumberTests {
    @Test func absurdNumbersInHelloAndEnvelopesAreClampedAndTheConnectionWorks() async throws {
        try await withSocketMode(prepare: { _, socketMode in socketMode.setSendsHello(false) }) { harness in
            let socketMode = harness.socketMode
            try await socketMode.waitFor("connection 1 open") { $0.contains(.opened(1)) }
            try await socketMode.send(
                json: ["type": "hello", "num_connections": 1e300, "debug_info": ["approximate_connection_time": -5.0]], to: 1)
            try await eventually("connected") { harness.client.isConnected }
            #expect(harness.logs.text.contains(#""slack.connections": ?"#), "an absurd count is not shown as a count")

            var envelope = mentionEnvelope("env-huge-retry", eventID: "EvHuge")
            if case .object(var members) = envelope {
                members["retry_attempt"] = 9.3e18
                envelope = .object(members)
            }
            try await socketMode.send(json: envelope, to: 1)
            try await socketMode.waitForAck(envelopeID: "env-huge-retry")
            let received = try await harness.received.wait(count: 1)
            #expect(received.first?.retryAttempt == 100, "clamped to the most retries ever read")
        }
    }
}
