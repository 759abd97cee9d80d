import Foundation
import RelayCore
import Testing

@testable import DiscordAdapter

@Suite("Discord interactions")
struct DiscordInteractionTests {
    /// A recorded payload from `Resources/discord/`.
    static func payload(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Resources/discord"))
        return Array(try Data(contentsOf: url))
    }

    static func parse(_ line: String) throws -> Command {
        try CommandParser().parse(line)
    }

    @Test func aPingIsAPing() throws {
        let interaction = try DiscordInteraction.decode(try Self.payload("ping"))
        #expect(interaction.kind == .ping)
        #expect(interaction.id == "1300000000000000001")
        #expect(interaction.user?.username == "discord")
        #expect(interaction.command == nil)
    }

    @Test func aSlashCommandBecomesTheCommandLineTheRelayParses() throws {
        let interaction = try DiscordInteraction.decode(try Self.payload("command-translate"))
        #expect(interaction.kind == .applicationCommand)
        #expect(interaction.guildID == "1100000000000000001")
        #expect(interaction.channelID == "1100000000000000002")
        #expect(interaction.user?.id == "1000000000000000042" && interaction.user?.username == "ada" && interaction.user?.globalName == "Ada")
        #expect(interaction.locale == "fr")
        #expect(interaction.memberPermissions == "2251799813685247")
        let command = try #require(interaction.command)
        let line = try #require(command.commandLine)
        #expect(line == "/translate --private -- fr Good morning, see you at the --standup")
        let parsed = try Self.parse(line)
        #expect(parsed.kind == .translate(Language(code: "fr", name: "French")))
        #expect(parsed.text == "Good morning, see you at the --standup")
        #expect(parsed.options.isPrivate)
        // The token is there to use, and nowhere in what can be logged.
        #expect(interaction.token.secret == "aW50ZXJhY3Rpb246MTMwMDAwMDAwMDAwMDAwMDAwMjp0cmFuc2xhdGU")
        #expect(!"\(interaction)".contains("aW50"))
        #expect(!String(reflecting: interaction).contains("aW50"))
    }

    @Test func factCheckRunsATribunalOnTheMessageItWasUsedOn() throws {
        let interaction = try DiscordInteraction.decode(try Self.payload("message-command-fact-check"))
        let command = try #require(interaction.command)
        #expect(command.type == 3 && command.name == "Fact-check")
        #expect(command.targetMessage?.content == "The Eiffel Tower is in Berlin @everyone --k 9")
        #expect(command.targetMessage?.authorID == "1000000000000000043")
        let parsed = try Self.parse(try #require(command.commandLine))
        #expect(parsed.kind == .tribunal)
        #expect(parsed.text == "The Eiffel Tower is in Berlin @everyone --k 9", "the message's text is text, not options")
        #expect(parsed.options.k == nil)
    }

    @Test func aButtonInADMComesBackAsRunAgain() throws {
        let interaction = try DiscordInteraction.decode(try Self.payload("component-run-again-dm"))
        #expect(interaction.kind == .messageComponent)
        #expect(interaction.guildID == nil)
        #expect(interaction.user?.id == "1000000000000000042", "in a DM the user is at the top level")
        #expect(interaction.component?.button == .runAgain(commandLine: "/fix its a beatiful day"))
        #expect(interaction.component?.messageID == "1400000000000000099")
    }

    @Test func subcommandsBecomeTheirLines() throws {
        let interaction = try DiscordInteraction.decode(try Self.payload("command-chain-save"))
        let line = try #require(interaction.command?.commandLine)
        #expect(line == "/chain save polish = input > grammar > rewrite:professional > output")
        #expect(try Self.parse(line).kind == .chain(.save(name: "polish", source: "input > grammar > rewrite:professional > output")))
    }

    static func invocation(_ name: String, _ options: [JSONValue]) throws -> DiscordCommandInvocation {
        let data: JSONValue = ["name": .string(name), "type": 1, "options": .array(options)]
        return try PayloadDecoding.json(DiscordCommandInvocation.self, from: data.encoded(), as: "test")
    }

    static func string(_ name: String, _ value: String) -> JSONValue { ["name": .string(name), "type": 3, "value": .string(value)] }

    @Test(
        arguments: [
            ("translate", [string("text", "Good morning"), string("lang", "fr")], "/translate fr Good morning"),
            ("translate", [string("text", "is it raining"), string("lang", "it")], "/translate to it is it raining"),
            ("rewrite", [string("text", "shorter sentences please")], "/rewrite clearer shorter sentences please"),
            ("rewrite", [string("text", "hey"), string("style", "formal"), string("tier", "mid")], "/rewrite --tier mid formal hey"),
            ("tribunal", [string("claim", "Water boils at 90 °C"), ["name": "k", "type": 4, "value": 5]], "/tribunal --k 5 Water boils at 90 °C"),
            ("run", [string("name", "polish"), string("text", "we has shipped")], "/run polish we has shipped"),
            ("settings", [string("key", "lang"), string("value", "de"), string("scope", "channel")], "/settings channel lang de"),
            ("settings", [], "/settings"),
            ("history", [["name": "clear", "type": 5, "value": true]], "/history clear"),
            ("help", [string("command", "translate")], "/help translate"),
            ("rhea", [string("line", "extract the notes")], "/extract the notes"),
            ("ai", [string("prompt", "name three cats"), ["name": "private", "type": 5, "value": true]], "/ai --private name three cats"),
        ] as [(String, [JSONValue], String)])
    func optionsMapToLinesTheParserReadsAsChosen(name: String, options: [JSONValue], expected: String) throws {
        let line = try #require(try Self.invocation(name, options).commandLine)
        #expect(line == expected)
        #expect(throws: Never.self) { try Self.parse(line) }
    }

    @Test func chainRunAndCommandAdminParse() throws {
        let run = try Self.invocation(
            "chain", [["name": "run", "type": 1, "options": [Self.string("name", "polish"), ["name": "private", "type": 5, "value": true]]]])
        #expect(run.commandLine == "/chain run --private polish")
        #expect(try Self.parse(run.commandLine!).kind == .chain(.run(name: "polish")))
        let add = try Self.invocation(
            "command", [["name": "add", "type": 1, "options": [Self.string("name", "eli5"), Self.string("template", "Explain: {input}")]]])
        #expect(try Self.parse(add.commandLine!).kind == .command(.add(name: "eli5", template: "Explain: {input}")))
        #expect(try Self.invocation("nope", []).commandLine == nil)
    }

    @Test func hostileInteractionsNeverCrash() {
        let inputs: [String] = [
            "", "null", "[]", "{}", #"{"type":1}"#, #"{"type":"1","id":"1","application_id":"2","token":"t"}"#,
            #"{"type":99,"id":"1","application_id":"2","token":"t"}"#, #"{"type":2,"id":"1","application_id":"2","token":"t","data":{}}"#,
            #"{"type":2,"id":"x","application_id":"2","token":"t","data":{"name":"a"}}"#,
            #"{"type":2,"id":"1","application_id":"2","token":"t","data":{"name":"a","options":[{"name":"x","type":4,"value":"NaN"},{"type":5}]}}"#,
            #"{"type":3,"id":"1","application_id":"2","token":"t","data":{"custom_id":""}}"#,
            "{\"type\":2,\"id\":\"1\",\"application_id\":\"2\",\"token\":\"t\",\"data\":{\"name\":\"a\",\"options\":"
                + String(repeating: "[{\"name\":\"n\",\"type\":1,\"options\":", count: 200) + "[]" + String(repeating: "}]", count: 200) + "}}",
            String(repeating: "{\"a\":", count: 100_000),
        ]
        for input in inputs {
            if let interaction = try? DiscordInteraction.decode(Array(input.utf8)) {
                #expect(interaction.command?.options.count ?? 0 <= 25)
            }
        }
        // What does not decode says which field is at fault (the route answers it 400).
        let problem = { (field: String) in PayloadProblem("Discord interaction", "field `\(field)` is invalid") }
        #expect(throws: problem("type")) { try DiscordInteraction.decode(Array(inputs[6].utf8)) }
        #expect(throws: problem("id")) { try DiscordInteraction.decode(Array(inputs[8].utf8)) }
        #expect(throws: PayloadProblem("Discord interaction", "missing field `data.name`")) { try DiscordInteraction.decode(Array(inputs[7].utf8)) }
        #expect(throws: problem("data.custom_id")) { try DiscordInteraction.decode(Array(inputs[10].utf8)) }
        #expect(throws: PayloadProblem("Discord interaction", "field `type` is not a number")) { try DiscordInteraction.decode(Array(inputs[5].utf8)) }
        let deep = try? DiscordInteraction.decode(Array(inputs[11].utf8))
        var depth = 0
        var options = deep?.command?.options ?? []
        while let first = options.first {
            depth += 1
            options = first.options
        }
        #expect(depth <= 3)
    }
}
