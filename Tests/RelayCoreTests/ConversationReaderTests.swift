import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Synchronization
import Testing

/// A platform's answers about a conversation, and a record of what it was asked.
final class ScriptedReader: ConversationReader {
    let admins: Set<String>
    let thread: [String]
    private let asked = Mutex<[String]>([])

    init(admins: Set<String> = [], thread: [String] = []) {
        self.admins = admins
        self.thread = thread
    }

    var questions: [String] { asked.withLock { $0 } }

    func isAdmin(_ event: Event) async -> Bool {
        asked.withLock { $0.append("admin \(event.user)") }
        return admins.contains(event.user)
    }

    func threadMessages(_ event: Event, limit: Int) async -> [String] {
        asked.withLock { $0.append("thread \(event.thread ?? "-") \(limit)") }
        return Array(thread.prefix(limit))
    }
}

/// The relay asks the platform about admins and threads only when the command needs it.
@Suite("Asking the platform only when needed")
struct ConversationReaderTests {
    static func relay(_ reader: ScriptedReader, configuration: RelayConfiguration = RelayConfiguration()) -> Relay {
        Relay(tribunal: ScriptedTribunal(), store: MemoryStore(), configuration: configuration, readers: ["chat": reader])
    }

    static func event(_ text: String, user: String = "ada", thread: String? = nil, repliedTo: String? = nil, key: String? = nil) -> Event {
        Event(platform: "chat", team: "t", channel: "c", thread: thread, user: user, text: text, repliedTo: repliedTo, eventKey: key)
    }

    @Test func onlyCommandsThatChangeTeamThingsAskWhetherTheUserIsAnAdmin() async throws {
        let reader = ScriptedReader(admins: ["boss"])
        let relay = Self.relay(reader)
        let refused = await relay.handle(Self.event("/settings channel lang fr"))
        #expect(refused?.body.contains("Only team admins can change this channel's settings") == true)
        let accepted = await relay.handle(Self.event("/settings channel lang fr", user: "boss"))
        #expect(accepted?.body == "This channel's lang is now French (fr).")
        _ = await relay.handle(Self.event("/settings lang de"))
        _ = await relay.handle(Self.event("/fix teh cat"))
        #expect(reader.questions == ["admin ada", "admin boss"])
    }

    @Test func summarizeInAThreadWithNoTextReadsTheThreadOthersDoNot() async throws {
        let reader = ScriptedReader(thread: ["We ship Friday?", "Only after QA."])
        let relay = Self.relay(reader, configuration: RelayConfiguration(threadMessageLimit: 50))
        let summary = await relay.handle(Self.event("/summarize", thread: "T1"))
        #expect(summary?.body == "[summarize@cheap] We ship Friday?\nOnly after QA.")
        _ = await relay.handle(Self.event("/summarize the notes", thread: "T1"))
        _ = await relay.handle(Self.event("/summarize", thread: "T1", repliedTo: "one message"))
        _ = await relay.handle(Self.event("/fix teh cat", thread: "T1"))
        _ = await relay.handle(Self.event("/summarize"))
        #expect(reader.questions == ["thread T1 50"])
    }

    @Test func aPlatformRetryAsksNothing() async throws {
        let reader = ScriptedReader(admins: ["boss"], thread: ["hello"])
        let relay = Self.relay(reader)
        #expect(await relay.handle(Self.event("/tribunal", user: "boss", thread: "T1", key: "Ev1")) != nil)
        #expect(await relay.handle(Self.event("/tribunal", user: "boss", thread: "T1", key: "Ev1")) == nil)
        #expect(reader.questions == ["thread T1 200"])
    }

    @Test func theRunReportsTheCommandItRan() async throws {
        let relay = Self.relay(ScriptedReader())
        #expect(await relay.run(Self.event("/grammar teh")).metricName == "fix")
        #expect(await relay.run(Self.event("/formal hey")).metricName == "formal")
        #expect(await relay.run(Self.event("/nonsense")).metricName == "unparsed")
        _ = await relay.handle(Self.event("/command add eli5 Explain like I'm five: {input}"))
        #expect(await relay.run(Self.event("/eli5 gravity")).metricName == "custom")
        #expect(await relay.run(Self.event("/fix once", key: "Ev9")).metricName == "fix")
        let retry = await relay.run(Self.event("/fix once", key: "Ev9"))
        #expect(retry.reply == nil)
        #expect(retry.metricName == "fix")
    }
}
