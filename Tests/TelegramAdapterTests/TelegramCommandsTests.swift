import Foundation
import RelayCore
import Testing

@testable import TelegramAdapter

@Suite("Telegram command registration")
struct TelegramCommandsTests {
    static let payloads = TelegramCommands.payloads()
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../bots/telegram/commands.json")

    /// Every constraint `setMyCommands` puts on a command list, on every payload.
    @Test func everyCommandMeetsTelegramsConstraints() throws {
        let namePattern = try Regex("^[a-z0-9_]{1,32}$")
        for payload in Self.payloads {
            let commands = try #require(payload["commands"]?.arrayValue)
            #expect((1...100).contains(commands.count))
            var names = Set<String>()
            for command in commands {
                let name = try #require(command["command"]?.stringValue)
                #expect(name.wholeMatch(of: namePattern) != nil, "\(name)")
                #expect(names.insert(name).inserted, "\(name) twice")
                let description = try #require(command["description"]?.stringValue)
                #expect((1...256).contains(description.utf16.count), "\(name): \(description)")
                #expect(command.objectValue?.keys.sorted() == ["command", "description"])
            }
        }
    }

    /// The menu is the table `/help` lists, in its order, each described by its summary; the
    /// table has no other language, so there is one payload and it names none.
    @Test func theMenuIsTheCommandTable() throws {
        #expect(Self.payloads.count == 1)
        #expect(Self.payloads[0]["language_code"] == nil)
        let commands = try #require(Self.payloads[0]["commands"]?.arrayValue)
        #expect(commands.compactMap { $0["command"]?.stringValue } == CommandTable.all.map(\.name))
        for spec in CommandTable.all {
            #expect(commands.contains(["command": .string(spec.name), "description": .string(spec.summary)]), "/help lists /\(spec.name)")
        }
        #expect(commands.contains(["command": "translate", "description": "Translate text (default language from /settings, else English)."]))
    }

    @Test(arguments: ["translate", "a", "run_2", String(repeating: "x", count: 32)])
    func validNames(name: String) {
        #expect(TelegramCommands.isValidName(name))
    }

    @Test(arguments: ["", "Fact-check", "Translate", "fix-it", "café", String(repeating: "x", count: 33)])
    func invalidNames(name: String) {
        #expect(!TelegramCommands.isValidName(name))
    }

    @Test func aLongSummaryIsCutToTwoHundredFiftySix() {
        let spec = CommandSpec(name: "long", summary: String(repeating: "word ", count: 100), usage: "/long", examples: [], input: nil)
        let description = TelegramCommands.description(of: spec)
        #expect(description.utf16.count <= 256 && description.hasSuffix("…"))
        #expect(TelegramCommands.description(of: CommandSpec(name: "bare", summary: "", usage: "/bare", examples: [], input: nil)) == "bare")
    }

    /// `bots/telegram/commands.json` is exactly what `register telegram` sends.
    @Test func theCheckedInFileIsTheGeneratedPayload() throws {
        let generated = TelegramCommands.fileContents()
        if ProcessInfo.processInfo.environment["RHEA_WRITE_TELEGRAM_COMMANDS"] == "1" {
            try generated.write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let checkedIn = (try? String(contentsOf: Self.file, encoding: .utf8)) ?? ""
        #expect(
            checkedIn == generated,
            """
            bots/telegram/commands.json differs from TelegramCommands.payloads()[0]. Regenerate it with
            RHEA_WRITE_TELEGRAM_COMMANDS=1 swift test --filter TelegramCommandsTests
            and commit the result.
            """)
        #expect(JSONValue.parse(Array(checkedIn.utf8)) == Self.payloads[0])
        #expect(generated.hasSuffix("}\n") && !generated.contains("\\/"))
    }
}
