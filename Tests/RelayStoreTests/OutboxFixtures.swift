import Foundation
import RelayCore
import RelayPipeline

/// Outbox entries and contents for the store tests.
enum OutboxFixtures {
    /// A pending entry created at `instant(created)`, due at `instant(due ?? created)`.
    static func entry(
        _ id: String, conversation: String = "slack:T1:C1", created: TimeInterval = 0, due: TimeInterval? = nil,
        content: OutboxEntry.Content? = nil
    ) -> OutboxEntry {
        OutboxEntry(
            id: id, platform: "slack", conversation: conversation, address: "{\"channel\":\"C1\"}",
            content: content ?? .reply(Reply(kind: .result, body: "reply \(id)")),
            nextAttemptAt: instant(due ?? created), createdAt: instant(created))
    }

    /// A consensus result with everything a reply can carry: title, footer with dissent, notes,
    /// privacy and both kinds of action.
    static let fullReply = Reply(
        kind: .result, title: "Tribunal · 4 of 5", body: "Mostly true: the bridge opened in 1937.",
        footer: AgreementFooter(
            ConsensusResult(
                answer: "Mostly true", verdict: .partly, agreement: 0.82, confidence: 0.7, answered: 4, asked: 5,
                dissent: [
                    Dissent(model: "model-c", verdict: .false, reason: "Says it opened in 1936."),
                    Dissent(model: "model-e", reason: "Did not commit to a verdict."),
                ],
                models: ["model-a", "model-b", "model-c", "model-d"], elapsed: .milliseconds(1250), scoreMeaning: .agreement)),
        notes: ["model-e timed out", "Answered by the council"], isPrivate: true,
        actions: [.postToChannel, .runAgain(commandLine: "/tribunal the bridge opened in 1937")])

    static let progress = RunProgress(completed: 2, total: 5, block: "translate:fr")

    static let parkedEvent = Event(
        platform: "slack", team: "T1", channel: "C1", thread: "1750000000.000100", user: "U1",
        userName: "alice", text: "/run polish Make this better", repliedTo: "the earlier message",
        threadMessages: ["first", "second"], eventKey: "Ev123", isAdmin: true)

    /// Every kind of content, each in an entry that also sets the optional fields.
    static let everyContent: [OutboxEntry] = [
        OutboxEntry(
            id: "reply-1", platform: "slack", conversation: "slack:T1:C1", address: "{\"response_url\":\"sealed\"}",
            content: .reply(fullReply), replaces: "progress-1", attempts: 2, nextAttemptAt: instant(30),
            createdAt: instant(), lastError: "HTTP 503"),
        OutboxEntry(
            id: "progress-1", platform: "terminal", conversation: "terminal:local", address: "",
            content: .progress(progress), nextAttemptAt: instant(), createdAt: instant()),
        OutboxEntry(
            id: "parked-1", platform: "slack", conversation: "slack:T1:C1", address: "{\"channel\":\"C1\"}",
            content: .parkedRun(parkedEvent), nextAttemptAt: instant(5), createdAt: instant(5)),
    ]
}

/// Claims with a one-minute lease from `now`, as a delivery worker would, and returns the ids.
func claim(_ store: any OutboxStore, at now: TimeInterval, limit: Int = 10) async throws -> [String] {
    try await store.claimDueOutbox(now: instant(now), leaseUntil: instant(now + 60), limit: limit).map(\.id)
}
