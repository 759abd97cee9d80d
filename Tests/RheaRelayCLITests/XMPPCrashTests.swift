import Foundation
import Glibc
import RelayTestSupport
import RelayTestTags
import Testing

/// Issue 43, point 9: `rhea-relay serve` on XMPP, killed with SIGKILL in the middle of a burst
/// of commands in a room and started again on the same store: every command the relay took is
/// answered, once — a run cut short runs again and corrects the same placeholder.
@Suite("XMPP: a relay killed mid-burst", .tags(.peers))
struct XMPPCrashTests {
    @Test func everyCommandTheRelayTookIsAnsweredOnceAfterAKill() async throws {
        try await ProsodyTestServer.with { server in
            try await server.register("rhea", password: "rhea-password-0123")
            try await server.register("ada", password: "ada-password-0123")
            try await withFakeRheaTribunal { tribunal in
                // Answers take a second: the kill finds some answered, some running, some waiting.
                await tribunal.setDelay(path: FakeRheaTribunal.quickPath, seconds: 1)
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rhea-xmpp-crash-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: directory) }
                let database = directory.appendingPathComponent("relay.sqlite").path
                let room = "team@\(server.conference)"
                let environment = [
                    "STORE_PATH": database, "TRIBUNAL_URL": tribunal.url, "XMPP_JID": "rhea@localhost", "XMPP_PASSWORD": "rhea-password-0123",
                    "XMPP_ROOMS": room, "XMPP_SERVER": "127.0.0.1:\(server.port)", "XMPP_CA_FILE": server.caFile, "LOG_LEVEL": "warning",
                    // Two at a time: XMPP sends at once, and the kill must find runs left.
                    "RUNS_MAX_IN_FLIGHT": "2",
                ]
                let first = try await ServeProcess(environment: environment, directory: directory)
                let count = 12
                let burst = (1...count).map { XMPPHuman.Step.sayInRoom("!translate fr n\($0)", room: room) }
                let ada = try await XMPPHuman(
                    on: server, user: "ada", password: "ada-password-0123", rooms: [room],
                    plan: [.waitJoin("rhea", room: room)] + burst + [.waitText("n\(count)", from: "rhea", timeout: 150), .sleep(3)], limit: .seconds(220))
                func answered() -> Int { XMPPHuman.shown(ada.messages(from: "rhea")).filter { !$0.hasPrefix("⏳") }.count }
                try await eventually("the relay to take every command, and answer some") {
                    try await IRCCrashTests.accepted(database) == count && answered() >= 3
                }
                // At a moment that has nothing to do with the sends (the answer just seen is one).
                try await Task.sleep(for: .milliseconds(Int.random(in: 100...900)))
                let answeredBefore = answered()
                kill(first.process.processIdentifier, SIGKILL)
                await first.exited(within: .seconds(10))
                #expect(answeredBefore < count, "the kill came before the last answer")
                let second = try await ServeProcess(environment: environment, directory: directory)
                let seen = try await ada.finish(within: .seconds(240))
                await second.stop()
                let shown = XMPPHuman.shown(seen.filter { $0.event == "message" && $0.sender == "rhea" })
                for number in 1...count {
                    #expect(shown.filter { $0 == "ada: [translate:fr] n\(number)" }.count == 1, "n\(number): \(shown)")
                }
                #expect(shown.filter { !$0.hasPrefix("⏳") }.count == count, "\(shown)")
                // A placeholder the kill caught between its send and the store's record is sent
                // again (a new message, the first left at "⏳"), as on Telegram: at most one.
                #expect(shown.filter { $0.hasPrefix("⏳") }.count <= 1, "\(shown)")
            }
        }
    }
}
