import Foundation
import RelayTestSupport
import Synchronization

/// The slow-connection scenario (issue 9, point 6): many clients that send a slash command's
/// headers, promise a body, then trickle it a byte every few seconds — never idle, never done.
/// The server must close them at its read timeout, keep answering real commands meanwhile, and
/// not grow past its normal flood memory.
struct SlowConnectionScenario {
    var connections: Int
    /// Between two trickled bytes.
    var interval: Duration
    /// The bound on one connection's trickle, so a server that never closes cannot hang the bench.
    var giveUpAfter: Duration
    /// Real commands sent while the slow clients hold their connections.
    var commands: Int

    struct Result {
        var closedAfter: [Duration]
        var stillOpen: Int
        var failedToConnect: Int
        var commandsAcked: Int
        var commandsAnswered: Int
    }

    /// A slash command's head with a fresh timestamp and a well-formed signature: it passes every
    /// check that needs no body, so the server waits for the body.
    static func head(length: Int) -> String {
        "POST /slack/commands HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + "Content-Length: \(length)\r\nX-Slack-Request-Timestamp: \(SlackSigner.now())\r\n"
            + "X-Slack-Signature: v0=\(String(repeating: "0", count: 64))\r\n\r\n"
    }

    func run(port: Int, client: CommandClient) async throws -> Result {
        let closed = Tally()
        let interval = interval
        let giveUpAfter = giveUpAfter
        return try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<connections {
                group.addTask {
                    do {
                        try await RawConnection.with(port: port) { connection in
                            let opened = ContinuousClock.now
                            try await connection.send(Self.head(length: 4096))
                            while !connection.isClosed && ContinuousClock.now - opened < giveUpAfter {
                                try? await connection.send("a")
                                // Checks the close often, sends a byte every `interval`.
                                let next = ContinuousClock.now + interval
                                while !connection.isClosed && ContinuousClock.now < next { try await Task.sleep(for: .milliseconds(250)) }
                            }
                            let after = ContinuousClock.now - opened
                            closed.state.withLock { state in
                                if connection.isClosed { state.after.append(after) } else { state.open += 1 }
                            }
                        }
                    } catch {
                        closed.state.withLock { $0.failed += 1 }
                    }
                }
            }
            // Once the slow clients are connected and trickling, real commands go through.
            try await Task.sleep(for: .seconds(2))
            var acked: [Int] = []
            for index in 0..<commands where await client.send(1_000_000_000 + index, user: index).status == 200 {
                acked.append(1_000_000_000 + index)
            }
            _ = await client.sink.waitForAll(acked, timeout: .seconds(30))
            let arrivals = client.sink.arrivals()
            let answered = acked.filter { arrivals[$0] != nil }.count
            try await group.waitForAll()
            return closed.state.withLock { state in
                Result(
                    closedAfter: state.after, stillOpen: state.open, failedToConnect: state.failed, commandsAcked: acked.count,
                    commandsAnswered: answered)
            }
        }
    }
}

/// What became of the slow connections, shared by their tasks.
private final class Tally: Sendable {
    let state = Mutex<(after: [Duration], open: Int, failed: Int)>(([], 0, 0))
}
