import Foundation
import RelayTestSupport
import RelayTestTags
import Testing

/// Issue 24: three `rhea-relay serve` processes on one real PostgreSQL, as an operator runs
/// several replicas, with faults an operator meets: a replica killed with SIGKILL.
@Suite("Replicas on PostgreSQL: faults end to end", .serialized, .tags(.peers))
struct ReplicaFaultTests {
    /// A signed slash command to one replica; true when it was acknowledged (HTTP 200).
    static func slashCommand(port: Int, text: String, responseURL: String, channel: String) async -> Bool {
        await ServeReplicas.slashCommand(port: port, text: text, responseURL: responseURL, channel: channel)?.status == 200
    }

    @Test func everyAcknowledgedCommandIsAnsweredWhileEachReplicaIsKilledOnce() async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            try await withFakeRheaTribunal { tribunal in
                // Runs take a while, so a kill finds some in flight.
                await tribunal.setDelay(path: FakeRheaTribunal.quickPath, seconds: 0.3)
                try await withFakeSlackWebAPI { slack in
                    let replicas = try await ServeReplicas.slack(3, database: database, tribunal: tribunal, slack: slack)
                    var acknowledged: [String] = []
                    var refused = 0
                    do {
                        for round in 0..<3 {
                            // Twenty commands spread over the replicas, then the round's replica dies.
                            try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                                for index in 0..<20 {
                                    let url = slack.makeResponseURL()
                                    let port = replicas.processes[index % 3].port
                                    // A channel each (Slack paces a channel to about a message a second).
                                    let channel = "C\(round)X\(index)"
                                    group.addTask {
                                        (
                                            url,
                                            await Self.slashCommand(port: port, text: "fr round \(round) number \(index)", responseURL: url, channel: channel)
                                        )
                                    }
                                }
                                try await Task.sleep(for: .milliseconds(150))
                                await replicas.kill9(round)
                                for try await (url, ok) in group {
                                    if ok { acknowledged.append(url) } else { refused += 1 }
                                }
                            }
                            try await replicas.restart(round)
                        }
                        // Every acknowledged command gets its answer; the takeover needs a lease (10 s).
                        let deadline = Date().addingTimeInterval(45)
                        while Date() < deadline, acknowledged.contains(where: { slack.requests(responseURL: $0).isEmpty }) {
                            try await Task.sleep(for: .milliseconds(200))
                        }
                    } catch {
                        // What people saw: a resend replaces the first post at its response_url (issue 28).
                        let shownTwice = acknowledged.filter { slack.responses(responseURL: $0).count > 1 }
                        let said = await replicas.stopAll()
                        Issue.record("answers shown twice: \(shownTwice); replicas said: \(said.suffix(4000))")
                        throw error
                    }
                    let unanswered = acknowledged.filter { slack.requests(responseURL: $0).isEmpty }
                    let doubled = acknowledged.filter { slack.requests(responseURL: $0).count > 1 }
                    // How long after the first the second delivery came: a resend after the killed
                    // replica's delivery lease lapsed, not two replicas sending at once.
                    let gaps = doubled.compactMap { url -> Duration? in
                        let path = slack.requests(responseURL: url).first?.path
                        let times = slack.arrivalTimes(path: path)
                        return times.count > 1 ? times[0].duration(to: times[1]) : nil
                    }
                    // What people saw: a resend replaces the first post at its response_url (issue 28).
                    let shownTwice = acknowledged.filter { slack.responses(responseURL: $0).count > 1 }
                    let said = await replicas.stopAll()
                    #expect(acknowledged.count >= 30, "most commands reach a live replica (refused: \(refused))")
                    #expect(unanswered.isEmpty, "\(unanswered.count) acknowledged commands lost; replicas said: \(said.suffix(3000))")
                    // A reply the platform accepted just before its replica was killed, whose mark
                    // was not written, goes out again once the lease lapses: the documented
                    // at-the-sink window. Counted; each is a resend after the lease, never a race.
                    // How many depends on how many deliveries were between send and mark at each kill
                    // (0 on an idle machine, up to about four a kill on a loaded one): printed below.
                    #expect(gaps.allSatisfy { $0 >= .seconds(5) }, "doubles came \(gaps) apart")
                    #expect(shownTwice.isEmpty, "\(shownTwice.count) answers shown twice")
                    print(
                        "fault test: \(acknowledged.count) acknowledged, \(refused) refused, \(unanswered.count) lost, \(doubled.count) sent twice \(gaps) apart, "
                            + "\(shownTwice.count) shown twice")
                }
            }
        }
    }
}
