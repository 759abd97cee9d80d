import Foundation
import RelayCore
import RelayTestSupport
import RelayTestTags
import Testing

/// Issue 43, point 5: XMPP on three `rhea-relay serve` replicas on one real PostgreSQL. One
/// replica holds the session (the `xmpp.connection` lease) and sends every reply over it,
/// whichever replica ran the command; killed, its lease lapses and another replica signs in,
/// joins the room and answers — one session with the server at any time.
@Suite("Replicas on PostgreSQL: one XMPP session, handed over", .serialized, .tags(.peers))
struct ReplicaXMPPTests {
    @Test func oneReplicaHoldsTheSessionAndAnotherTakesItOver() async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            try await withFakeRheaTribunal { tribunal in
                try await ProsodyTestServer.with { server in
                    try await server.register("rhea", password: "rhea-password-0123")
                    try await server.register("ada", password: "ada-password-0123")
                    let room = "team@\(server.conference)"
                    let replicas = try await ServeReplicas(
                        count: 3,
                        environment: [
                            "STORE_URL": database.url, "TRIBUNAL_URL": tribunal.url, "XMPP_JID": "rhea@localhost", "XMPP_PASSWORD": "rhea-password-0123",
                            "XMPP_ROOMS": room, "XMPP_SERVER": "127.0.0.1:\(server.port)", "XMPP_CA_FILE": server.caFile, "LOG_LEVEL": "warning",
                        ])
                    let first = (1...6).map { XMPPHuman.Step.sayInRoom("!translate fr before \($0)", room: room) }
                    let second = (1...6).map { XMPPHuman.Step.sayInRoom("!translate fr after \($0)", room: room) }
                    let ada = try await XMPPHuman(
                        on: server, user: "ada", password: "ada-password-0123", rooms: [room],
                        plan: [.waitJoin("rhea", room: room)] + first + [
                            .waitText("before 6", from: "rhea"), .sleep(1), .mark("first"), .waitSignal("killed"), .waitJoin("rhea", room: room, timeout: 60),
                        ] + second + [.waitText("after 6", from: "rhea", timeout: 90), .sleep(2)],
                        limit: .seconds(240))
                    let (shown, _) = try await replicas.run {
                        try await eventually("the first answers") { ada.records.contains { $0.event == "mark" && $0.name == "first" } }
                        let signIns = { server.logTail(100_000).split(separator: "\n").filter { $0.contains("Authenticated as rhea@localhost") }.count }
                        #expect(signIns() == 1, "one session among three replicas:\n\(server.logTail())")
                        try await replicas.waitUntilIdle()
                        let rows = try await PostgresTestServer.shared().queryStrings(
                            "SELECT holder FROM leases WHERE name = 'xmpp.connection' AND expires_at > extract(epoch FROM now())", database: database.name)
                        let holder = try #require(rows.first?.first.flatMap { $0 }, "a live lease")
                        let pid = try #require(Int32(holder.split(separator: "/").dropFirst().first ?? ""), "\(holder)")
                        let index = try #require(replicas.index(ofProcess: pid), "\(holder)")
                        await replicas.kill9(index)
                        let killed = ContinuousClock.now
                        do {
                            try await eventually("the room to see the relay go", safety: .seconds(30)) {
                                ada.records.contains { $0.event == "left" && $0.nick == "rhea" }
                            }
                        } catch {
                            Issue.record(
                                "\(error)\n\(ada.records.map { "\($0.event) \($0.nick ?? "") \($0.text ?? "")" }.joined(separator: "\n"))\n\(server.logTail(60))"
                            )
                            throw error
                        }
                        try ada.signal("killed")
                        try await eventually("another replica to sign in") { signIns() == 2 }
                        #expect(ContinuousClock.now - killed < .seconds(20), "taken over within the lease's bound")
                        let seen = try await ada.finish(within: .seconds(200))
                        #expect(signIns() == 2, "still one session:\n\(server.logTail())")
                        return XMPPHuman.shown(seen.filter { $0.event == "message" && $0.sender == "rhea" })
                    }
                    for label in (1...6).map({ "before \($0)" }) + (1...6).map({ "after \($0)" }) {
                        #expect(shown.filter { $0 == "ada: [translate:fr] \(label)" }.count == 1, "\(label): \(shown)")
                    }
                }
            }
        }
    }
}
