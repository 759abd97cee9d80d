import Foundation
import RelayCore
import RelayTestSupport
import RelayTestTags
import Testing

/// Issue 43, point 1: IRC on three `rhea-relay serve` replicas on one real PostgreSQL. One
/// replica holds the connection (the `irc.connection` lease) and sends every reply over it,
/// whichever replica ran the command; killed, its lease lapses and another replica connects,
/// rejoins and answers — one connection to the server at any time.
@Suite("Replicas on PostgreSQL: one IRC connection, handed over", .serialized, .tags(.peers))
struct ReplicaIRCTests {
    @Test func oneReplicaHoldsTheConnectionAndAnotherTakesItOver() async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            try await withFakeRheaTribunal { tribunal in
                try await NgircdTestServer.with { server in
                    let replicas = try await ServeReplicas(
                        count: 3,
                        environment: [
                            "STORE_URL": database.url, "TRIBUNAL_URL": tribunal.url, "IRC_SERVER": "irc://127.0.0.1:\(server.port)", "IRC_NICK": "Rhea",
                            "IRC_CHANNELS": "#rhea", "LOG_LEVEL": "warning",
                        ])
                    let first = (1...6).map { IRCHuman.Step.say("!translate fr before \($0)", to: "#rhea") }
                    let second = (1...6).map { IRCHuman.Step.say("!translate fr after \($0)", to: "#rhea") }
                    let ada = try await IRCHuman(
                        on: server, nick: "ada", channels: ["#rhea"],
                        plan: [.waitJoin("Rhea", channel: "#rhea")] + first + [
                            .waitFrom("Rhea", count: 6), .mark("first"), .waitSignal("killed"),
                            .waitJoin("Rhea", channel: "#rhea", timeout: 60),
                        ] + second + [.waitFrom("Rhea", count: 12, timeout: 90), .sleep(1)],
                        limit: .seconds(240))
                    let (texts, _) = try await replicas.run {
                        try await eventually("the first answers") { ada.records.contains { $0.event == "mark" && $0.name == "first" } }
                        let registrations = { server.logs.split(separator: "\n").filter { $0.contains("\" registered") && $0.contains("User \"Rhea") }.count }
                        #expect(registrations() == 1, "one connection among three replicas:\n\(server.logTail())")
                        // Killed between sends: a reply the server took in the moment before the
                        // store recorded it would go again (IRC cannot tell it from a new one;
                        // IRCCrashTests kills at random moments).
                        try await replicas.waitUntilIdle()
                        let rows = try await PostgresTestServer.shared().queryStrings(
                            "SELECT holder FROM leases WHERE name = 'irc.connection' AND expires_at > extract(epoch FROM now())", database: database.name)
                        let holder = try #require(rows.first?.first.flatMap { $0 }, "a live lease")
                        let pid = try #require(Int32(holder.split(separator: "/").dropFirst().first ?? ""), "\(holder)")
                        let index = try #require(replicas.index(ofProcess: pid), "\(holder)")
                        await replicas.kill9(index)
                        let killed = ContinuousClock.now
                        try await eventually("the server to see the relay go") { ada.records.contains { $0.event == "quit" && $0.from == "Rhea" } }
                        try ada.signal("killed")
                        try await eventually("another replica to connect") { registrations() == 2 }
                        #expect(ContinuousClock.now - killed < .seconds(20), "taken over within the lease's bound")
                        let seen = try await ada.finish(within: .seconds(200))
                        #expect(registrations() == 2, "still one connection:\n\(server.logTail())")
                        return seen.filter { $0.event == "message" && $0.from == "Rhea" }.compactMap(\.text)
                    }
                    for label in (1...6).map({ "before \($0)" }) + (1...6).map({ "after \($0)" }) {
                        #expect(texts.filter { $0 == "ada: [translate:fr] \(label)" }.count == 1, "\(label): \(texts)")
                    }
                }
            }
        }
    }
}
