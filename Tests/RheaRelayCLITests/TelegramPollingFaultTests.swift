import Foundation
import RelayCore
import RelayTestSupport
import RelayTestTags
import Testing

/// Issue 24: Telegram's long polling across three `rhea-relay serve` processes on one real
/// PostgreSQL. Telegram allows one `getUpdates` at a time per bot: a newer one ends the one still
/// waiting with 409 "Conflict: terminated by other getUpdates request", and the fake does the
/// same (`pollConflicts`). One replica polls (the `telegram.poll` lease); when it is killed or
/// stopped, another takes over where it stopped, and no two polls are ever open at once.
@Suite("Replicas on PostgreSQL: Telegram long polling", .serialized, .tags(.peers))
struct TelegramPollingFaultTests {
    /// How soon after its holder's death a connection moves: the lease (8 s) and one round of
    /// asking (2 s), `ConnectionLease.Timing()`'s bound; plus the new holder's first two calls
    /// (`deleteWebhook`, `getUpdates`) on a machine busy with the other replicas, with room for
    /// a loaded CI machine (0.5 s has been too little). A holder that kept its lease would
    /// never be taken over, and a round of asking missed adds 2 s.
    static let takeoverBound: Duration = .seconds(13)

    @Test func pollingMovesToALiveReplicaWithoutTwoPollsAtOnce() async throws {
        let server = try await PostgresTestServer.shared()
        try await server.withDatabase { database in
            try await withFakeRheaTribunal { tribunal in
                // Runs take a while, so the killed poller leaves runs in flight, not at the sink.
                await tribunal.setDelay(path: FakeRheaTribunal.quickPath, seconds: 2)
                try await withFakeTelegramBotAPI { telegram in
                    let environment = [
                        "STORE_URL": database.url, "TRIBUNAL_URL": tribunal.url, "TELEGRAM_BOT_TOKEN": telegram.token,
                        "TELEGRAM_API_URL": telegram.url, "LOG_LEVEL": "warning",
                    ]
                    var chats: [Int64] = []
                    /// Queues `count` commands, each in a chat of its own; returns the last update id.
                    func feed(_ count: Int, wave: String) -> Int {
                        var last = 0
                        for _ in 0..<count {
                            let id = telegram.nextUpdateID()
                            let chat = Int64(9_000 + id)
                            chats.append(chat)
                            telegram.enqueue(
                                TelegramUpdates.message(updateID: id, messageID: 10, chat: chat, from: chat, text: "/translate fr wave \(wave) number \(id)"))
                            last = id
                        }
                        return last
                    }
                    /// The replica that holds the poll lease now.
                    func holder(of replicas: ServeReplicas) async throws -> Int? {
                        let rows = try await server.queryStrings(
                            "SELECT holder FROM leases WHERE name = 'telegram.poll' AND expires_at > extract(epoch FROM now())", database: database.name)
                        guard let holder = rows.first?.first ?? nil else { return nil }
                        let parts = holder.split(separator: "/")
                        return parts.count == 3 ? Int32(parts[1]).flatMap(replicas.index(ofProcess:)) : nil
                    }
                    /// How long after `since` the first `getUpdates` came, when one came within 60 s.
                    func nextPoll(after since: ContinuousClock.Instant) async throws -> Duration? {
                        let deadline = since + .seconds(60)
                        while ContinuousClock.now < deadline {
                            // Updates are waiting, so that call is answered (and recorded) at once.
                            if let call = telegram.calls("getUpdates").first(where: { $0.arrived > since }) { return since.duration(to: call.arrived) }
                            try await Task.sleep(for: .milliseconds(20))
                        }
                        return nil
                    }
                    /// The polls that ended unanswered because their poller went (its connection closed).
                    func ended() -> Int {
                        telegram.calls("getUpdates").filter { $0.status == nil }.count
                    }
                    func waitUntilAnswered(within limit: Duration) async throws {
                        let deadline = ContinuousClock.now + limit
                        while ContinuousClock.now < deadline, chats.contains(where: { telegram.messages(chat: $0).isEmpty }) {
                            try await Task.sleep(for: .milliseconds(100))
                        }
                    }

                    let replicas = try await ServeReplicas(count: 3, environment: environment)
                    let ((killed, stopped), said) = try await replicas.run {
                        try await eventually("a replica to poll", safety: .seconds(60)) { !telegram.offsets.isEmpty }
                        // Wave A reaches the poller, which stores it and confirms it by polling
                        // again; it is killed right then, its runs in flight.
                        let lastA = feed(6, wave: "A")
                        try await eventually("wave A stored", safety: .seconds(60)) { (telegram.lastOffset ?? 0) > lastA }
                        let first = try #require(try await holder(of: replicas), "one replica holds telegram.poll")
                        let killedAt = ContinuousClock.now
                        await replicas.kill9(first)
                        // Its poll ends with its connection; then wave B waits with Telegram
                        // while no one polls.
                        try await eventually("the killed poller's poll to end", safety: .seconds(30)) { ended() == 1 || !telegram.pollConflicts.isEmpty }
                        _ = feed(6, wave: "B")
                        let killed = try #require(try await nextPoll(after: killedAt), "polling resumes after the holder is killed")
                        try await replicas.restart(first)
                        // Wave A's runs move with their inbox leases (10 s), wave B's come by the new poller.
                        try await waitUntilAnswered(within: .seconds(60))

                        // A graceful stop releases the lease: the next replica polls at its next ask.
                        let second = try #require(try await holder(of: replicas), "one replica holds telegram.poll")
                        #expect(second != first)
                        let stoppedAt = ContinuousClock.now
                        replicas.processes[second].process.terminate()
                        try await eventually("the stopped poller's poll to end", safety: .seconds(30)) { ended() == 2 || !telegram.pollConflicts.isEmpty }
                        _ = feed(6, wave: "C")
                        let stopped = try #require(try await nextPoll(after: stoppedAt), "polling resumes after the holder stops")
                        await replicas.processes[second].exited()
                        try await waitUntilAnswered(within: .seconds(60))
                        try await replicas.waitUntilIdle()
                        return (killed, stopped)
                    }
                    // Answers as people see them: a placeholder the killed replica sent but did not mark
                    // is sent again, and the first stays at "⏳" (docs/serving.md: the placeholder itself can
                    // double); the answer is edited into one message.
                    let replies = chats.map { telegram.messages(chat: $0).filter { !$0.text.hasPrefix("⏳") }.count }
                    let conflicts = telegram.pollConflicts
                    #expect(conflicts.isEmpty, "no getUpdates was ever ended by another: \(conflicts.map(\.arrived))")
                    #expect(telegram.mostConcurrentPolls == 1, "never two polls open at once")
                    #expect(
                        replies.allSatisfy { $0 == 1 },
                        "every update answered once: \(zip(chats, replies).filter { $0.1 != 1 }); replicas said: \(said.suffix(3000))")
                    #expect(killed < Self.takeoverBound, "polling resumed \(killed) after the holder was killed")
                    // The others ask every 2 s; a lease left to lapse would free 6–8 s after the stop.
                    // 5 s tells a release from a lapse with room for a loaded machine.
                    #expect(stopped < .seconds(5), "polling resumed \(stopped) after the holder stopped")
                    let polls = telegram.calls("getUpdates").count
                    print(
                        "telegram polling on three replicas: \(chats.count) updates, \(replies.reduce(0, +)) replies, \(conflicts.count) conflicts (409), "
                            + "\(polls) getUpdates (\(ended()) ended by their poller going); takeover \(killed) after SIGKILL, \(stopped) after SIGTERM")
                }
            }
        }
    }
}
