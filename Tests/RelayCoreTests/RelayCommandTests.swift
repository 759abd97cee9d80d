import RelayCore
import RelayPipeline
import RelayTestSupport
import Synchronization
import Testing

@Suite("Relay: quick actions, tribunal, input, help")
struct RelayCommandTests {
    @Test func translateUsesTheTypedLanguageElseTheSettingElseEnglish() async throws {
        try await RelayHarness.with { relay in
            #expect(await relay.send("/translate fr Good morning").body == "[translate:fr@cheap] Good morning")
            #expect(await relay.send("/translate Good morning").body == "[translate:en@cheap] Good morning")
            await relay.send("/settings lang German")
            let reply = await relay.send("/translate Good morning")
            #expect(reply.body == "[translate:de@cheap] Good morning")
            #expect(reply.title == "Translation · German")
            #expect(reply.kind == .result)
        }
    }

    @Test func inputComesFromTheReplyThenTheThreadWhereAllowed() async throws {
        try await RelayHarness.with { relay in
            #expect(await relay.send("/fix", repliedTo: "teh cat").body == "[grammar@cheap] teh cat")
            #expect(await relay.send("/summarize", thread: ["one", "two"]).body == "[summarize@cheap] one\ntwo")
            #expect(await relay.send("/summarize x", thread: ["one"]).body == "[summarize@cheap] x")
            // Translate does not read the thread: it says what to add.
            let missing = await relay.send("/translate fr", thread: ["one"])
            #expect(missing.kind == .error)
            #expect(
                missing.body
                    == "`/translate` needs the text to translate: add it after the command (`/translate fr Good morning`) or reply to a message with `/translate`."
            )
            let summarize = await relay.send("/summarize")
            #expect(summarize.body.contains("inside a thread"))
        }
    }

    @Test func tierComesFromTheOptionThenSettings() async throws {
        try await RelayHarness.with { relay in
            #expect(await relay.send("/fix --tier frontier x").body == "[grammar@frontier] x")
            await relay.send("/settings tier mid")
            #expect(await relay.send("/fix x").body == "[grammar@mid] x")
            #expect(await relay.send("/fix x --private").isPrivate)
        }
    }

    @Test func tribunalShowsAgreementModelsAndDissent() async throws {
        let tribunal = ScriptedTribunal(agreement: { _, _ in 0.6 })
        try await RelayHarness.with(tribunal: tribunal) { relay in
            let reply = await relay.send("/tribunal --k 4 The Eiffel Tower is in Berlin")
            #expect(reply.body == "Consensus (cheap): The Eiffel Tower is in Berlin")
            #expect(reply.footer?.summary == "Agreement 60% · 4/4 models · 0.0 s · fact-check #1")
            #expect(reply.footer?.dissent.count == 1)
            #expect(await tribunal.recorder.consensusRequests.first?.k == 4)
            // Replying to someone's message fact-checks it.
            let replied = await relay.send("/factcheck", repliedTo: "Water boils at 50 °C")
            #expect(replied.body.hasSuffix("Water boils at 50 °C"))
        }
    }

    @Test func aSuccessShareScoreIsLabelledHonestly() async throws {
        try await RelayHarness.with(tribunal: ScriptedTribunal(scoreMeaning: .answeredShare)) { relay in
            let reply = await relay.send("/tribunal sky is blue")
            #expect(reply.footer?.summary.hasPrefix("Answered 82%") == true)
            #expect(reply.notes.contains { $0.contains("share of models that answered, not their agreement") })
        }
    }

    @Test func backendErrorsBecomeMessagesAUserUnderstandsWithAnErrorIdWhoseDetailsAreLogged() async throws {
        let tribunal = ScriptedTribunal(failure: { _ in .unreachable(url: "http://127.0.0.1:9", reason: "connection refused") })
        try await RelayHarness.with(tribunal: tribunal) { harness in
            let logged = Mutex<[LoggedFailure]>([])
            let chat = RelayHarness(
                relay: harness.relay.reportingFailures(.chat(log: { failure in logged.withLock { $0.append(failure) } })), store: harness.store,
                tribunal: harness.tribunal)
            // A command, and a chain whose block fails: every path shows the id, not the address.
            _ = await chat.send("/chain save polish = input > grammar > output")
            for line in ["/fix x", "/tribunal x", "/run polish x"] {
                let reply = await chat.send(line)
                #expect(reply.kind == .error)
                #expect(reply.body.contains("The AI backend could not be reached (error id "), "\(line): \(reply.body)")
                #expect(!reply.body.contains("127.0.0.1"))
                #expect(!reply.body.contains("connection refused"))
                #expect(!reply.body.contains("TRIBUNAL_URL"))
                let id = try #require(logged.withLock { $0.last?.id })
                #expect(reply.body.contains(id))
                #expect(logged.withLock { $0.last?.detail.contains("http://127.0.0.1:9 (connection refused)") } == true)
            }
            #expect(Set(logged.withLock { $0.map(\.id) }).count == 3)

            // The operator's terminal sees the details instead.
            let terminal = RelayHarness(relay: harness.relay.reportingFailures(.operator), store: harness.store, tribunal: harness.tribunal)
            let reply = await terminal.send("/fix x")
            #expect(reply.body.contains("http://127.0.0.1:9"))
            #expect(reply.body.contains("TRIBUNAL_URL"))
        }
    }

    @Test func aLongUnknownCommandNameIsEchoedCutAt64Characters() async throws {
        try await RelayHarness.with { relay in
            let name = String(repeating: "x", count: 500)
            let reply = await relay.send("/\(name) hello")
            #expect(reply.kind == .error)
            #expect(reply.body == "Unknown command `/\(String(repeating: "x", count: 64))…`. Type `/help` for the list of commands.")
        }
    }

    @Test func unknownCommandsSuggestTheClosest() async throws {
        try await RelayHarness.with { relay in
            let reply = await relay.send("/tribnal x")
            #expect(reply.kind == .error)
            #expect(reply.body == "Unknown command `/tribnal`. Did you mean `/tribunal`? Type `/help` for the list of commands.")
        }
    }

    @Test func helpListsEveryCommandAndExplainsOne() async throws {
        try await RelayHarness.with { relay in
            let list = await relay.send("/help")
            for spec in CommandTable.all { #expect(list.body.contains("/\(spec.name)")) }
            #expect(list.body.contains("/grammar"))
            let one = await relay.send("/help fix")
            #expect(one.body.contains("Usage: `/fix TEXT`"))
            #expect(one.body.contains("`/grammar`"))
            #expect(await relay.send("/help nope").kind == .error)
        }
    }

    @Test func aPlatformRetryOfTheSameEventGetsNoSecondReply() async throws {
        let tribunal = ScriptedTribunal()
        try await RelayHarness.with(tribunal: tribunal) { relay in
            let first = await relay.send("/fix x", eventKey: "Ev1")
            let second = await relay.send("/fix x", eventKey: "Ev1")
            #expect(first.kind == .result)
            #expect(second.body == "<duplicate>")
            #expect(await tribunal.recorder.quickRequests.count == 1)
        }
    }
}
