import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayTestSupport
import Synchronization
import Testing

@testable import TelegramAdapter

/// The inline answerer's deadline, on the manual clock: Telegram drops an answer that comes too
/// late, so past `deadline` the person gets the "working on it" card, and the run goes on; its
/// result answers the next query at once. Time passes only when the test moves it, so a slow
/// machine cannot make the model look late, nor a fast one look in time.
@Suite("Telegram inline answers, on the manual clock")
struct TelegramInlineDeadlineTests {
    static let deadline: Duration = .seconds(8)

    /// A model that answers when the test says so.
    final class GatedInbox: RelayInbox {
        private let gate = Mutex<[CheckedContinuation<Void, Never>]>([])
        private let asked = Mutex<[String]>([])

        var lines: [String] { asked.withLock { $0 } }

        func submit(_ event: Event, route: ReplyRoute) async throws -> Submission { .accepted(ahead: 0) }
        func post(_ reply: Reply, route: ReplyRoute, onceAs key: String?, replacing: String?) async throws -> Bool { true }
        func outboxEntry(id: String) async throws -> OutboxEntry? { nil }

        func answerNow(_ event: Event) async -> Reply? {
            asked.withLock { $0.append(event.text) }
            await withCheckedContinuation { continuation in gate.withLock { $0.append(continuation) } }
            return Reply(kind: .result, title: "Translation", body: "Bonjour")
        }

        /// Lets every waiting run answer.
        func release() {
            let waiting = gate.withLock { gate in
                defer { gate.removeAll() }
                return gate
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    /// Records `answerInlineQuery` calls.
    final class RecordingBotAPI: TelegramBotAPI {
        private let bodies = Mutex<[JSONValue]>([])

        var answers: [JSONValue] { bodies.withLock { $0 } }

        func call(_ method: String, _ body: JSONValue, timeout: Duration?) async throws(TelegramAPIError) -> TelegramResult {
            if method == "answerInlineQuery" { bodies.withLock { $0.append(body) } }
            return TelegramResult(body: Array(#"{"ok":true,"result":true}"#.utf8))
        }

        func downloadFile(path: String, maxBytes: Int, timeout: Duration) async throws(TelegramAPIError) -> TelegramFileDownload { .bytes([]) }
    }

    static func query(_ id: String, _ text: String) throws -> TelegramInlineQuery {
        let json: JSONValue = ["id": .string(id), "from": ["id": 41_000_001, "is_bot": false, "first_name": "Ada"], "query": .string(text)]
        return try PayloadDecoding.json(TelegramInlineQuery.self, from: json.encoded(), as: "test")
    }

    static func cardIDs(_ answer: JSONValue?) -> [String] {
        (answer?["results"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    }

    @Test func pastTheDeadlineTheWorkingCardGoesOutAndTheResultAnswersTheNextQuery() async throws {
        let clock = ManualClock()
        let (inbox, api) = (GatedInbox(), RecordingBotAPI())
        let answerer = TelegramInlineAnswerer(inbox: inbox, api: api, deadline: Self.deadline, clock: clock, logger: Logger(label: "test"))

        let first = Task { await answerer.answer(try! Self.query("q1", "fr Good morning")) }
        await clock.waitForSleepers()
        // A second short of the deadline: nothing is answered yet.
        clock.advance(by: Self.deadline - .seconds(1))
        #expect(api.answers.isEmpty)
        clock.advance(by: .seconds(1))
        // Bounded, so an answerer that waited for the model fails here rather than hangs.
        try await eventually("an answer at the deadline") { !api.answers.isEmpty }
        #expect(Self.cardIDs(api.answers.last) == ["working"])
        #expect(api.answers.last?["cache_time"] == 0, "a working card is never cached by Telegram")
        #expect(inbox.lines == ["/translate fr Good morning"])

        // The run goes on and finishes; the same query again (a space added) is answered at once.
        inbox.release()
        await first.value
        try await eventually("the run's result kept") {
            await answerer.answer(try Self.query("q2", "fr Good morning "))
            return Self.cardIDs(api.answers.last) == ["result"]
        }
        #expect(api.answers.last?["results"]?[0]?["input_message_content"]?["message_text"] == "Bonjour")
        #expect(inbox.lines.count == 1, "the model was asked once")
    }

    @Test func anAnswerWithinTheDeadlineIsTheResultCard() async throws {
        let clock = ManualClock()
        let (inbox, api) = (GatedInbox(), RecordingBotAPI())
        let answerer = TelegramInlineAnswerer(inbox: inbox, api: api, deadline: Self.deadline, clock: clock, logger: Logger(label: "test"))

        let first = Task { await answerer.answer(try! Self.query("q1", "fix teh cat")) }
        await clock.waitForSleepers()
        clock.advance(by: Self.deadline - .milliseconds(1))
        try await eventually("the model asked") { inbox.lines.count == 1 }
        inbox.release()
        await first.value
        #expect(Self.cardIDs(api.answers.last) == ["result"])
        #expect(api.answers.count == 1)
        #expect(inbox.lines == ["/fix teh cat"])
        clock.advance(by: .seconds(1))  // the deadline's sleeper, released
    }
}
