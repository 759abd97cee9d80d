import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Synchronization
import Testing

/// A platform's answers about a conversation, and a record of what it was asked.
final class ScriptedReader: ConversationReader {
    let thread: [String]
    private let asked = Mutex<[String]>([])
    /// Who the platform says administers the team, and whether it can be asked at all.
    let platform: Mutex<(admins: Set<String>, reachable: Bool)>

    init(admins: Set<String> = [], thread: [String] = []) {
        self.platform = Mutex((admins, true))
        self.thread = thread
    }

    var questions: [String] { asked.withLock { $0 } }

    var platformAdmins: String { "the chat's owners" }

    func isAdmin(_ event: Event) async -> Bool? {
        asked.withLock { $0.append("admin \(event.user)") }
        return platform.withLock { $0.reachable ? $0.admins.contains(event.user) : nil }
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
        #expect(refused?.body.contains("Only this team's admins can change this channel's settings") == true)
        let accepted = await relay.handle(Self.event("/settings channel lang fr", user: "boss"))
        #expect(accepted?.body == "This channel's lang is now French (fr).")
        _ = await relay.handle(Self.event("/settings lang de"))
        _ = await relay.handle(Self.event("/fix teh cat"))
        #expect(reader.questions == ["admin ada", "admin boss"])
    }

    @Test func aYesIsKeptAMinuteANoAndAnOutageAreNot() async throws {
        let reader = ScriptedReader(admins: ["boss"])
        let clock = ManualClock()
        let relay = Relay(tribunal: ScriptedTribunal(), store: MemoryStore(), clock: clock, readers: ["chat": reader])
        #expect(await relay.handle(Self.event("/settings channel lang fr", user: "boss"))?.kind == .info)
        #expect(await relay.handle(Self.event("/settings channel lang de", user: "boss"))?.kind == .info)
        #expect(reader.questions == ["admin boss"], "the second command asked nothing")

        // Demoted on the platform: it shows once the kept yes expires, a minute on.
        reader.platform.withLock { $0.admins = [] }
        clock.advance(by: .seconds(59))
        #expect(await relay.handle(Self.event("/settings channel lang it", user: "boss"))?.kind == .info)
        clock.advance(by: .seconds(2))
        let demoted = await relay.handle(Self.event("/settings channel lang es", user: "boss"))
        #expect(demoted?.body.contains("Only this team's admins can change this channel's settings") == true)
        #expect(demoted?.body.contains("Admins are: the chat's owners;") == true)

        // Promoted again: at once, as a no is not kept.
        reader.platform.withLock { $0.admins = ["boss"] }
        #expect(await relay.handle(Self.event("/settings channel lang es", user: "boss"))?.kind == .info)

        // The platform cannot be asked: refused, and asked again the next time.
        reader.platform.withLock { $0 = (["ada"], false) }
        #expect(await relay.handle(Self.event("/settings channel lang es"))?.kind == .error)
        reader.platform.withLock { $0.reachable = true }
        #expect(await relay.handle(Self.event("/settings channel lang es"))?.kind == .info)
        #expect(reader.questions == ["admin boss", "admin boss", "admin boss", "admin ada", "admin ada"])
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
        let relay = Self.relay(ScriptedReader(admins: ["boss"]))
        #expect(await relay.run(Self.event("/grammar teh")).metricName == "fix")
        #expect(await relay.run(Self.event("/formal hey")).metricName == "formal")
        #expect(await relay.run(Self.event("/nonsense")).metricName == "unparsed")
        _ = await relay.handle(Self.event("/command add eli5 Explain like I'm five: {input}", user: "boss"))
        #expect(await relay.run(Self.event("/eli5 gravity")).metricName == "custom")
        #expect(await relay.run(Self.event("/fix once", key: "Ev9")).metricName == "fix")
        let retry = await relay.run(Self.event("/fix once", key: "Ev9"))
        #expect(retry.reply == nil)
        #expect(retry.metricName == "fix")
    }
}
