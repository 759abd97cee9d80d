import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTestTags
import SlackAdapter
import Testing

/// Issue 47, point 5, through the real server on 127.0.0.1 over raw TCP. Alone: its bound (the
/// timeout plus a second) is a real deadline, and its 600 connections writing four times a second
/// would hold up the deadlines other suites check beside it.
@Suite("serve: slow headers are cut off", .serialized, .tags(.alone))
struct SlowHeadersTests {
    /// The read and idle timeouts of the suite it came from (2 s and 60 s).
    func configuration(_ fakes: SlackFakes) -> AppConfiguration { RequestLimitsTests().configuration(fakes) }

    /// Issue 47, point 5: the read timeout counts from a request's first byte, so a client that
    /// trickles its header lines (a line every 250 ms is never idle, and no head exists until the
    /// blank line) is cut off like one that trickles its body. 600 of them, past the connection
    /// cap: every one is closed within the timeout plus a second, and `/healthz` answers
    /// throughout.
    @Test func sixHundredHeaderTricklersAreClosedWithinTheReadTimeoutAndHealthAnswersThroughout() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(configuration(fakes)) { relay in
                let port = try #require(relay.client.port)
                let timeout = Duration.seconds(2)
                let lines = ["Host: 127.0.0.1"] + (0..<200).map { "X-Trickle-\($0): a" }
                let (opened, open) = AsyncStream.makeStream(of: Void.self)
                let results = try await withThrowingTaskGroup(of: Duration?.self) { group in
                    for index in 0..<600 {
                        // Opened 40 at a time, 100 ms apart (all 600 are open at once by 1.5 s):
                        // 600 connects in one instant queue in the listen backlog, and the
                        // last one's first byte is read, and its timeout starts, a second or
                        // more after its client sent it on a loaded machine.
                        if index > 0, index % 40 == 0 { try await Task.sleep(for: .milliseconds(100)) }
                        group.addTask {
                            try await RawConnection.with(port: port) { connection in
                                let started = ContinuousClock.now
                                try? await connection.send("GET /healthz HTTP/1.1\r\n")
                                open.yield()
                                // 200 lines would take 50 s; the server must close it long before.
                                for line in lines where !connection.isClosed {
                                    try? await connection.send(line + "\r\n")
                                    try? await Task.sleep(for: .milliseconds(250))
                                }
                                return connection.closedAt.map { $0 - started }
                            }
                        }
                    }
                    // Health, while they trickle: every answer 200.
                    var seen = 0
                    for await _ in opened {
                        seen += 1
                        if seen == 600 { break }
                    }
                    // Each on a connection of its own, as a probe checks: an idle keep-alive
                    // connection is one the cap may shed while 600 others are held, and this
                    // client does not retry a request on a connection closed under it.
                    for _ in 0..<10 {
                        let status = try await RawConnection.with(port: port) { connection in
                            try await connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                            try await eventually("the health answer") { connection.status != nil || connection.isClosed }
                            return connection.status
                        }
                        #expect(status == 200)
                        try await Task.sleep(for: .milliseconds(200))
                    }
                    var results: [Duration?] = []
                    for try await result in group { results.append(result) }
                    return results
                }
                #expect(results.count == 600)
                #expect(results.allSatisfy { $0 != nil }, "every trickler was closed by the server")
                // From the client's first byte to the close as read (`closedAt`, not when the loop
                // above next looks): the second over the timeout holds the server's accepting
                // and reading 600 connections opened within a second and a half on two cores.
                let late = results.compactMap { $0 }.filter { $0 > timeout + .seconds(1) }
                #expect(late.isEmpty, "closed later than the timeout plus a second: \(late.count), the latest after \(late.max() ?? .zero)")
                #expect(await relay.modelRequests().isEmpty)
            }
        }
    }
}
