import Foundation
import Glibc
import RelayTestSupport
import RelayTestTags
import Testing

/// Issue 43, point 9: `rhea-relay serve` on IRC, killed with SIGKILL in the middle of a burst of
/// commands and started again on the same store: every command the relay took (stored in its
/// inbox before it died) is answered, once — by the next process, on its new connection.
@Suite("IRC: a relay killed mid-burst", .tags(.peers))
struct IRCCrashTests {
    /// The commands the relay's SQLite store took: its inbox's AUTOINCREMENT counter.
    static func accepted(_ database: String) async throws -> Int {
        let script =
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); r=c.execute(\"SELECT seq FROM sqlite_sequence WHERE name='inbox'\").fetchone(); print(r[0] if r else 0)"
        let (status, output) = try await runProcess(["python3", "-c", script, database], in: "/tmp", timeout: .seconds(30), step: "read the inbox counter")
        guard status == 0 else { return 0 }
        return Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    @Test func everyCommandTheRelayTookIsAnsweredOnceAfterAKill() async throws {
        try await NgircdTestServer.with { server in
            try await withFakeRheaTribunal { tribunal in
                // Answers take a second: the kill finds some answered, some running, some waiting.
                await tribunal.setDelay(path: FakeRheaTribunal.quickPath, seconds: 1)
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rhea-irc-crash-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: directory) }
                let database = directory.appendingPathComponent("relay.sqlite").path
                let environment = [
                    "STORE_PATH": database, "TRIBUNAL_URL": tribunal.url, "IRC_SERVER": "irc://127.0.0.1:\(server.port)", "IRC_NICK": "Rhea",
                    "IRC_CHANNELS": "#rhea", "LOG_LEVEL": "warning",
                ]
                let first = try await ServeProcess(environment: environment, directory: directory)
                let count = 12
                let burst = (1...count).map { IRCHuman.Step.say("!translate fr n\($0)", to: "#rhea") }
                let ada = try await IRCHuman(
                    on: server, nick: "ada", channels: ["#rhea"],
                    plan: [.waitJoin("Rhea", channel: "#rhea")] + burst + [.waitFrom("Rhea", count: count, timeout: 150), .sleep(2)], limit: .seconds(220))
                try await eventually("the relay to take every command, and answer some") {
                    let taken = try await Self.accepted(database)
                    return taken == count && ada.messages(from: "Rhea").count >= 3
                }
                // At a moment that has nothing to do with the sends (the answer just seen is one).
                try await Task.sleep(for: .milliseconds(Int.random(in: 100...900)))
                let answeredBefore = ada.messages(from: "Rhea").count
                kill(first.process.processIdentifier, SIGKILL)
                await first.exited(within: .seconds(10))
                #expect(answeredBefore < count, "the kill came before the last answer")
                let second = try await ServeProcess(environment: environment, directory: directory)
                let seen = try await ada.finish(within: .seconds(240))
                await second.stop()
                let texts = seen.filter { $0.event == "message" && $0.from == "Rhea" }.compactMap(\.text)
                for number in 1...count {
                    #expect(texts.filter { $0 == "ada: n\(number)" || $0 == "ada: [translate:fr] n\(number)" }.count == 1, "n\(number): \(texts)")
                }
                #expect(texts.count == count, "\(texts)")
            }
        }
    }
}
