import Foundation
import RelayCore
import Testing

@testable import DiscordAdapter

@Suite("Discord command registration")
struct DiscordCommandsTests {
    static let commands = DiscordCommands.payload().arrayValue ?? []
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../bots/discord/commands.json")

    /// Every constraint Discord puts on a bulk overwrite, checked on every command and option.
    @Test func everyCommandMeetsDiscordsConstraints() throws {
        let namePattern = try Regex(#"^[-_\p{L}\p{N}]{1,32}$"#)
        var names = Set<String>()
        for command in Self.commands {
            let name = try #require(command["name"]?.stringValue)
            #expect(names.insert(name).inserted, "\(name) twice")
            switch command["type"] {
            case 1:
                #expect(name.wholeMatch(of: namePattern) != nil && name == name.lowercased(), "\(name)")
                let description = try #require(command["description"]?.stringValue)
                #expect((1...100).contains(description.utf16.count), "\(name): \(description)")
                try checkOptions(command["options"]?.arrayValue ?? [], in: name, pattern: namePattern, depth: 0)
            case 3:
                #expect((1...32).contains(name.count), "\(name)")
                #expect(command["description"] == nil && command["options"] == nil, "message commands have neither")
            default:
                Issue.record("unexpected type of \(name)")
            }
        }
        #expect(Self.commands.filter { $0["type"] == 1 }.count <= 100)
        #expect(Self.commands.filter { $0["type"] == 3 }.count <= 15)
    }

    func checkOptions(_ options: [JSONValue], in command: String, pattern: Regex<AnyRegexOutput>, depth: Int) throws {
        #expect(options.count <= 25, "\(command) has \(options.count) options")
        var seenOptional = false
        var names = Set<String>()
        for option in options {
            let name = try #require(option["name"]?.stringValue)
            #expect(name.wholeMatch(of: pattern) != nil && name == name.lowercased(), "\(command) \(name)")
            #expect(names.insert(name).inserted)
            let description = try #require(option["description"]?.stringValue)
            #expect((1...100).contains(description.utf16.count), "\(command) \(name): \(description)")
            let required = option["required"]?.boolValue ?? false
            #expect(!(required && seenOptional), "\(command): required \(name) after an optional option")
            seenOptional = seenOptional || !required
            let choices = option["choices"]?.arrayValue ?? []
            #expect(choices.count <= 25, "\(command) \(name) has \(choices.count) choices")
            for choice in choices {
                #expect((1...100).contains(choice["name"]?.stringValue?.utf16.count ?? 0))
                #expect((1...100).contains(choice["value"]?.stringValue?.utf16.count ?? 0))
            }
            if option["type"] == 1 {
                #expect(depth == 0)
                try checkOptions(option["options"]?.arrayValue ?? [], in: "\(command) \(name)", pattern: pattern, depth: depth + 1)
            }
        }
    }

    @Test func theCommandsAreTheTablesAndEachOffersWhatTheTableHas() throws {
        let names = Self.commands.compactMap { $0["name"]?.stringValue }
        #expect(
            names == [
                "translate", "fix", "rewrite", "summarize", "explain", "ai", "tribunal", "run", "chain", "command", "settings", "history", "help", "rhea",
                "Fact-check", "Summarize thread", "Transcribe",
            ])
        for name in DiscordCommands.builtins {
            let spec = try #require(CommandTable.spec(named: name), "\(name) is not in the command table")
            #expect(Self.commands.first { $0["name"]?.stringValue == name }?["description"]?.stringValue == spec.summary)
        }
        let translate = try #require(Self.commands.first { $0["name"] == "translate" }?["options"]?.arrayValue)
        #expect(translate.compactMap { $0["name"]?.stringValue } == ["text", "lang", "tier", "private"])
        let languages = translate[1]["choices"]?.arrayValue ?? []
        #expect(languages.count == 25)
        #expect(languages.contains(["name": "French", "value": "fr"]))
        #expect(
            translate[2]["choices"] == [["name": "cheap", "value": "cheap"], ["name": "mid", "value": "mid"], ["name": "frontier", "value": "frontier"]])
        #expect(translate[3] == ["type": 5, "name": "private", "description": "Only you see the result"])
        let rewrite = try #require(Self.commands.first { $0["name"] == "rewrite" }?["options"]?[1]?["choices"]?.arrayValue)
        #expect(rewrite.compactMap { $0["value"]?.stringValue } == ["clearer"] + RewriteStyle.allCases.map(\.rawValue))
        let k = try #require(Self.commands.first { $0["name"] == "tribunal" }?["options"]?[1])
        #expect(k["min_value"] == 2 && k["max_value"] == 10 && k["type"] == 4)
    }

    /// `bots/discord/commands.json` is exactly what the code registers.
    @Test func theCheckedInFileIsTheGeneratedPayload() throws {
        let generated = DiscordCommands.fileContents()
        if ProcessInfo.processInfo.environment["RHEA_WRITE_DISCORD_COMMANDS"] == "1" {
            try generated.write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let checkedIn = (try? String(contentsOf: Self.file, encoding: .utf8)) ?? ""
        #expect(
            checkedIn == generated,
            """
            bots/discord/commands.json differs from DiscordCommands.payload(). Regenerate it with
            RHEA_WRITE_DISCORD_COMMANDS=1 swift test --filter DiscordCommandsTests
            and commit the result.
            """)
        #expect(JSONValue.parse(Array(checkedIn.utf8)) == DiscordCommands.payload())
    }
}
