import Foundation
import RelayCore
import RelayTestSupport
import RelayTestTags
import Testing

/// Issue 24: PostgreSQL goes away under two `rhea-relay serve` processes — stopped for a few
/// seconds, then restarted — while signed Slack commands keep coming. The replicas ride it out by
/// themselves: no command is acknowledged as accepted and then lost, what arrives during the
/// outage is refused in a way Slack or the person retries, `/readyz` says not ready meanwhile,
/// and once the server is back everything works again without restarting a process, the
/// notifications between replicas included.
@Suite("Replicas on PostgreSQL: PostgreSQL stopped and restarted", .serialized, .tags(.alone))
struct PostgresRestartTests {
    /// How a replica answered a slash command.
    enum Outcome: Equatable, CustomStringConvertible {
        /// 200 "Working on it…": stored, so it must be answered.
        case accepted
        /// 200 saying it was not accepted and to send it again (Slack never retries a slash
        /// command: the person does).
        case refused
        /// Another status: Slack shows the person an error.
        case failed(Int)
        /// No answer in time.
        case silent

        init(_ answer: ReplicaAnswer?) {
            guard let answer else {
                self = .silent
                return
            }
            switch answer.status {
            case 200 where answer.body.contains("Working on it"): self = .accepted
            case 200 where answer.body.contains("send it again"): self = .refused
            default: self = .failed(answer.status)
            }
        }

        var description: String {
            switch self {
            case .accepted: "accepted"
            case .refused: "refused"
            case .failed(let status): "HTTP \(status)"
            case .silent: "no answer"
            }
        }
    }

    /// Slack's deadline for any answer to a slash command or an event.
    static let slackDeadline: Duration = .seconds(3)

    @Test func replicasRideOutAStoppedAndARestartedPostgreSQL() async throws {
        let server = try await PostgresTestServer.startPrivate()
        let database = try await server.createDatabase()
        try await withFakeRheaTribunal { tribunal in
            try await withFakeSlackWebAPI { slack in
                let replicas = try await ServeReplicas.slack(2, database: database, tribunal: tribunal, slack: slack)
                var sent = 0
                /// Each command's response URL, by what its acknowledgement said.
                var outcomes: [(phase: String, url: String, outcome: Outcome, elapsed: Duration?)] = []

                /// Sends `count` translations spread over the replicas at once, each in a channel
                /// of its own.
                func commands(_ count: Int, phase: String) async {
                    let ports = replicas.processes.map(\.port)
                    let answers = await withTaskGroup(of: (String, ReplicaAnswer?).self) { group in
                        for index in 0..<count {
                            sent += 1
                            let (url, channel, number) = (slack.makeResponseURL(), "C0PG\(sent)", sent)
                            group.addTask {
                                let answer = await ServeReplicas.slashCommand(
                                    port: ports[index % ports.count], text: "fr \(phase) \(number)", responseURL: url, channel: channel, timeout: .seconds(10))
                                return (url, answer)
                            }
                        }
                        var answers: [(String, ReplicaAnswer?)] = []
                        for await answer in group { answers.append(answer) }
                        return answers
                    }
                    for (url, answer) in answers { outcomes.append((phase, url, Outcome(answer), answer?.elapsed)) }
                }
                /// Waits until both replicas answer `/readyz` with `status`; how long that took.
                func readiness(_ status: Int, within limit: Duration) async throws -> Duration {
                    let start = ContinuousClock.now
                    while true {
                        let statuses = await replicas.readinessStatuses()
                        if statuses.allSatisfy({ $0 == status }) { return start.duration(to: .now) }
                        guard start.duration(to: .now) < limit else { throw ServeError("/readyz answered \(statuses), not \(status), for \(limit)") }
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
                /// Waits until every replica listens for the others' notifications again (one
                /// connection each whose last statement is a LISTEN); how long that took.
                func listening(within limit: Duration) async throws -> Duration {
                    let start = ContinuousClock.now
                    let sql = "SELECT count(*)::text FROM pg_stat_activity WHERE datname = '\(database.name)' AND query LIKE 'LISTEN%'"
                    while true {
                        let count = Int((try? await server.queryStrings(sql, database: "postgres"))?.first?.first.flatMap { $0 } ?? "") ?? 0
                        if count >= replicas.processes.count { return start.duration(to: .now) }
                        guard start.duration(to: .now) < limit else { throw ServeError("\(count) replicas listen again after \(limit)") }
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
                /// A user's setting changed on replica 0 reaches replica 1, which read (and
                /// cached) it just before: the change's notification got through.
                func settingReachesTheOtherReplica(_ language: String, user: String) async throws {
                    func settings(_ replica: Int, _ text: String) async throws -> String {
                        let url = slack.makeResponseURL()
                        let answer = await ServeReplicas.slashCommand(
                            port: replicas.processes[replica].port, command: "/settings", text: text, responseURL: url, channel: "C0SETTINGS", user: user)
                        #expect(Outcome(answer) == .accepted, "/settings \(text) on replica \(replica): \(String(describing: answer))")
                        let reply = try #require(await slack.next(responseURL: url), "/settings \(text) answered")
                        return reply.rawBody
                    }
                    _ = try await settings(1, "")
                    _ = try await settings(0, "lang \(language)")
                    // The notification travels on its own connection: it may land a moment after
                    // the change's answer, so replica 1 is asked for up to two seconds (without the
                    // notification its cache would keep the old value for good).
                    var shown = try await settings(1, "")
                    for _ in 0..<100 where !shown.contains("(\(language))") {
                        try await Task.sleep(for: .milliseconds(100))
                        shown = try await settings(1, "")
                    }
                    #expect(shown.contains("(\(language))"), "replica 1 shows the language set on replica 0: \(shown)")
                }

                let ((outage, restart), said) = try await replicas.run {
                    // Ready first: the first commands then meet a store that has answered, not a
                    // fresh one still opening connections while the other replica starts.
                    _ = try await readiness(200, within: .seconds(60))
                    _ = try await listening(within: .seconds(60))
                    await commands(4, phase: "before")
                    try await settingReachesTheOtherReplica("fr", user: "U0SETTING1")

                    // Work in flight when the server goes: two replies being posted (Slack takes
                    // 2 s to answer them) and two runs waiting for the backend.
                    slack.failNext(2, with: .slow(seconds: 2))
                    await commands(2, phase: "posting when stopped")
                    let posting = outcomes.suffix(2).map(\.url)
                    try await eventually("the replies to be posting", safety: .seconds(10)) {
                        posting.allSatisfy { !slack.requests(responseURL: $0).isEmpty }
                    }
                    await tribunal.setDelay(path: FakeRheaTribunal.quickPath, seconds: 1.5)
                    await commands(2, phase: "running when stopped")

                    // Stopped for eight seconds, longer than a store operation waits: commands
                    // and events meanwhile, and the probes.
                    try await server.stop()
                    let stoppedAt = ContinuousClock.now
                    await tribunal.setDelay(path: FakeRheaTribunal.quickPath, seconds: 0)
                    let notReady = try await readiness(503, within: .seconds(10))
                    await commands(4, phase: "outage")
                    let events = await withTaskGroup(of: ReplicaAnswer?.self) { group in
                        for (index, port) in replicas.processes.map(\.port).enumerated() {
                            let event = ReplicaEventsTests.mention(
                                "translate fr during the outage", eventID: "Ev0OUTAGE\(index)", channel: "C0OUTAGE\(index)", ts: "1700000300.00010\(index)")
                            group.addTask { await ServeReplicas.event(port: port, event, timeout: .seconds(10)) }
                        }
                        var answers: [ReplicaAnswer?] = []
                        for await answer in group { answers.append(answer) }
                        return answers
                    }
                    try await Task.sleep(until: stoppedAt + .seconds(8))
                    try await server.start()
                    let ready = try await readiness(200, within: .seconds(30))
                    let listens = try await listening(within: .seconds(15))
                    await commands(4, phase: "after the outage")
                    // Slack retries the events it got an error for; the retries are answered.
                    for (index, process) in replicas.processes.enumerated() {
                        let event = ReplicaEventsTests.mention(
                            "translate fr during the outage", eventID: "Ev0OUTAGE\(index)", channel: "C0OUTAGE\(index)", ts: "1700000300.00010\(index)")
                        #expect(await ServeReplicas.event(port: process.port, event, retry: 1)?.status == 200, "Slack's retry is accepted")
                    }
                    try await settingReachesTheOtherReplica("de", user: "U0SETTING2")

                    // Restarted: commands right after it, and once ready again.
                    try await server.restart()
                    await commands(4, phase: "right after the restart")
                    let readyAgain = try await readiness(200, within: .seconds(30))
                    let listensAgain = try await listening(within: .seconds(15))
                    await commands(4, phase: "after the restart")
                    try await settingReachesTheOtherReplica("it", user: "U0SETTING3")

                    // Every command acknowledged as accepted is answered.
                    let deadline = ContinuousClock.now + .seconds(30)
                    while ContinuousClock.now < deadline, outcomes.contains(where: { $0.outcome == .accepted && slack.requests(responseURL: $0.url).isEmpty }) {
                        try await Task.sleep(for: .milliseconds(200))
                    }
                    // A run or a delivery the outage cut off is taken up again when its lease lapses.
                    try await replicas.waitUntilIdle(within: .seconds(30))
                    let outage = (notReady: notReady, events: events, ready: ready, listens: listens)
                    let restart = (ready: readyAgain, listens: listensAgain)
                    return (outage, restart)
                }
                try? await server.stop()

                let accepted = outcomes.filter { $0.outcome == .accepted }
                let lost = accepted.filter { slack.requests(responseURL: $0.url).isEmpty }
                // What the person sees: a resend that replaced its first post (`replace_original`) is one answer.
                let doubled = accepted.filter { slack.responses(responseURL: $0.url).count > 1 }
                let late = outcomes.filter { ($0.elapsed ?? .seconds(60)) >= Self.slackDeadline }
                let summary = outcomes.map { "\($0.phase): \($0.outcome) in \($0.elapsed.map { "\($0)" } ?? "-")" }
                #expect(lost.isEmpty, "\(lost.count) commands acknowledged as accepted were never answered; replicas said: \(said.suffix(3000))")
                #expect(doubled.isEmpty, "\(doubled.count) commands answered twice")
                #expect(
                    outcomes.allSatisfy { $0.outcome == .accepted || $0.outcome == .refused },
                    "every command is accepted or refused so that the person sends it again: \(summary)")
                #expect(late.isEmpty, "every acknowledgement within Slack's 3 s: \(summary)")
                for phase in ["before", "posting when stopped", "running when stopped", "after the outage", "after the restart"] {
                    #expect(outcomes.filter { $0.phase == phase }.allSatisfy { $0.outcome == .accepted }, "\(phase): \(summary)")
                }
                #expect(outage.notReady < Self.slackDeadline, "/readyz says 503 within a probe's 3 s while the store is away")
                #expect(outage.events.allSatisfy { ($0?.status ?? 200) >= 500 }, "an event during the outage is refused so that Slack retries it")
                #expect(outage.events.allSatisfy { ($0?.elapsed ?? .seconds(60)) < Self.slackDeadline }, "within Slack's 3 s")
                #expect((0..<2).map { slack.messages(channel: "C0OUTAGE\($0)").count } == [1, 1], "each event answered once, after Slack's retry")
                #expect(
                    (0..<2).allSatisfy { slack.messages(channel: "C0OUTAGE\($0)").first?.text.hasPrefix("⏳") == false },
                    "the answer took its placeholder's place")
                print(
                    "postgres stopped 8 s under 2 replicas: /readyz 503 after \(outage.notReady), ready \(outage.ready) after the start, listening again "
                        + "after \(outage.listens); restarted: ready after \(restart.ready), listening after \(restart.listens); commands: \(summary)")
            }
        }
    }
}
