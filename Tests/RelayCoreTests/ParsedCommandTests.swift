import Foundation
import RelayCore
import RelayPipeline
import RelayTestSupport
import Testing

/// A command line is read once, where its event is made; the event carries the typed command
/// through the inbox to the run, which executes it and checks only a custom command's name.
@Suite("A command read once")
struct ParsedCommandTests {
    static func event(_ text: String) -> Event {
        Event(platform: "test", team: "t", channel: "c", user: "ada", text: text)
    }

    @Test func anEventCarriesItsCommandAsReadWhereItWasMade() {
        #expect(
            Self.event("/translate fr Good morning").command
                == .command(Command(kind: .translate(Language(code: "fr", name: "French")), text: "Good morning")))
        #expect(
            Self.event("/fix --private its fine").command
                == .command(Command(kind: .action(.grammar), text: "its fine", options: CommandOptions(isPrivate: true))))
        #expect(Self.event("").command == .invalid(CommandError("Type a command, for example `/translate fr Good morning`. `/help` lists them all.")))
        // Not a built-in: kept as the team's custom command, checked by the run.
        #expect(Self.event("/eli5 black holes").command == .command(Command(kind: .custom(name: "eli5"), text: "black holes")))
    }

    @Test(
        "a name that is no built-in is checked against the team's custom commands",
        arguments: [
            ("/eli5 black holes", ["eli5"], "ok"),
            ("/eli5 black holes", [], "Unknown command `/eli5`."),
            ("/eli6 black holes", ["eli5"], "Did you mean `/eli5`?"),
            ("/transalte fr hi", [], "Did you mean `/translate`?"),
            // Options that do not scan: the option's error for a command the team has, else unknown.
            ("/eli5 --k 3 black holes", ["eli5"], "`--k` only applies to `/tribunal`"),
            ("/eli5 --k 3 black holes", [], "Unknown command `/eli5`."),
            // A built-in's error needs no custom command to be known.
            ("/fix --tier gold hi", ["eli5"], "Unknown tier `gold`"),
        ])
    func resolution(line: String, customs: [String], expected: String) {
        switch Self.event(line).command.resolved(customCommands: Set(customs)) {
        case .success(let command): #expect(expected == "ok", "\(line) → \(command)")
        case .failure(let error): #expect(error.message.contains(expected), "\(line) → \(error.message)")
        }
    }

    @Test(
        "parse with the team's commands is read and then resolved",
        arguments: ["/eli5 x", "/eli5 --private x", "/eli6 x", "/rhea eli5 x", "/translate fr x", "/settings lang klingon", "", "/zzz --tier gold"])
    func parseIsReadThenResolved(line: String) {
        let parser = CommandParser(customCommands: ["eli5"])
        let parsed: Result<Command, CommandError>
        do throws(CommandError) { parsed = .success(try parser.parse(line)) } catch { parsed = .failure(error) }
        #expect(parsed == CommandParser.read(line).resolved(customCommands: ["eli5"]))
    }

    @Test func theTypedCommandIsStoredWithTheEvent() throws {
        let event = Self.event("/tribunal --k 3 The sky is green")
        let json = try JSONEncoder().encode(event)
        let object = try #require(JSONValue.parse(Array(json)))
        #expect(object["command"] != nil, "the event's JSON keeps its typed command")
        #expect(try JSONDecoder().decode(Event.self, from: json) == event)
    }

    @Test func anEventStoredBeforeCommandsWereTypedIsReadFromItsText() throws {
        // As an older relay wrote it to the inbox: no `command`.
        let json = #"{"platform":"test","team":"t","channel":"c","user":"ada","text":"/fix its fine"}"#
        let event = try JSONDecoder().decode(Event.self, from: Data(json.utf8))
        #expect(event.command == .command(Command(kind: .action(.grammar), text: "its fine")))
    }

    @Test func theRunExecutesTheCommandItsEventCarries() async throws {
        // An event stored with a command its text does not say (no adapter makes one): the run
        // follows the command, so nothing between admission and the run reads the text again.
        var stored = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(Self.event("/translate fr Good morning"))) as? [String: Any])
        let other = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(Self.event("/fix its fine"))) as? [String: Any])
        stored["command"] = other["command"]
        let event = try JSONDecoder().decode(Event.self, from: JSONSerialization.data(withJSONObject: stored))
        try await RelayHarness.with { harness in
            let reply = await harness.relay.handle(event)
            #expect(reply?.kind == .result)
            #expect(await harness.tribunal.recorder.quickRequests.map(\.action) == [.grammar])
            #expect(await harness.tribunal.recorder.quickRequests.map(\.text) == ["its fine"])
        }
    }

    @Test("a voice note's setting is the command its line reads as", arguments: VoiceAction.allCases)
    func voiceActions(action: VoiceAction) throws {
        #expect(try CommandParser().parse(action.commandLine) == action.command)
    }
}
