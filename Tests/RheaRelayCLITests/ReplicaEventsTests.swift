import Foundation
import RelayCore
import RelayTestSupport
import RelayTestTags
import Testing

/// Issue 24: Slack delivers an Events API event again when it thinks the first delivery failed
/// (`X-Slack-Retry-Num`), and behind a load balancer the retry can reach another replica, even
/// while the first is still being handled. Two `rhea-relay serve` processes on one real
/// PostgreSQL answer it once.
@Suite("Replicas on PostgreSQL: a Slack event delivered to two replicas", .serialized, .tags(.peers))
struct ReplicaEventsTests {
    /// A mention of the bot with a command, as Slack sends it in an `event_callback`.
    static func mention(_ text: String, eventID: String, channel: String, ts: String) -> JSONValue {
        SlackPayloads.appMention(
            text: "<@\(FakeSlackWebAPI.botUserID)> \(text)", user: "U0HUMAN", channel: channel, ts: ts, eventID: eventID, team: "T0FAULT",
            botUserID: FakeSlackWebAPI.botUserID)
    }

    @Test func anEventDeliveredToBothReplicasIsAnsweredOnce() async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            try await withFakeRheaTribunal { tribunal in
                // A run long enough that the retries arrive while the first is running.
                await tribunal.setDelay(path: FakeRheaTribunal.quickPath, seconds: 0.5)
                try await withFakeSlackWebAPI { slack in
                    let replicas = try await ServeReplicas.slack(2, database: database, tribunal: tribunal, slack: slack)
                    let ports = replicas.processes.map(\.port)
                    let ((statuses, channels), _) = try await replicas.run {
                        var statuses: [Int?] = []
                        var channels: [String] = []
                        // One after the other: the first delivery to replica 1, Slack's first and
                        // second retries to replica 2 and back to replica 1.
                        for index in 0..<4 {
                            let channel = "C0SEQ\(index)"
                            channels.append(channel)
                            let event = Self.mention(
                                "translate fr one after the other \(index)", eventID: "Ev0SEQ\(index)", channel: channel, ts: "1700000100.00010\(index)")
                            statuses.append(await ServeReplicas.event(port: ports[0], event)?.status)
                            statuses.append(await ServeReplicas.event(port: ports[1], event, retry: 1)?.status)
                            statuses.append(await ServeReplicas.event(port: ports[0], event, retry: 2)?.status)
                        }
                        // At once: the delivery and its retry reach the two replicas together, so
                        // both admissions race for the event's id in the store.
                        try await withThrowingTaskGroup(of: Int?.self) { group in
                            for index in 0..<12 {
                                let channel = "C0TOGETHER\(index)"
                                channels.append(channel)
                                let event = Self.mention(
                                    "translate fr at once \(index)", eventID: "Ev0TOGETHER\(index)", channel: channel, ts: "1700000200.0001\(index + 10)")
                                // Which replica gets the first delivery alternates.
                                let (first, second) = index % 2 == 0 ? (ports[0], ports[1]) : (ports[1], ports[0])
                                group.addTask { await ServeReplicas.event(port: first, event)?.status }
                                group.addTask { await ServeReplicas.event(port: second, event, retry: 1)?.status }
                            }
                            for try await status in group { statuses.append(status) }
                        }
                        // Every event answered; then, once both replicas are idle, nothing more.
                        let deadline = ContinuousClock.now + .seconds(60)
                        // (A placeholder first, then the answer in its place.)
                        let answered = { (channel: String) in slack.messages(channel: channel).contains { !$0.text.hasPrefix("⏳") } }
                        while ContinuousClock.now < deadline, channels.contains(where: { !answered($0) }) {
                            try await Task.sleep(for: .milliseconds(100))
                        }
                        try await replicas.waitUntilIdle()
                        return (statuses, channels)
                    }
                    let replies = channels.map { slack.messages(channel: $0).count }
                    #expect(statuses.allSatisfy { $0 == 200 }, "every delivery and retry is acknowledged with 200: \(statuses)")
                    #expect(replies.allSatisfy { $0 == 1 }, "each event is answered exactly once: \(zip(channels, replies).filter { $0.1 != 1 })")
                    print(
                        "slack events on two replicas: \(channels.count) events, \(statuses.count) deliveries (\(statuses.filter { $0 == 200 }.count) answered 200), "
                            + "\(replies.reduce(0, +)) replies")
                }
            }
        }
    }
}
