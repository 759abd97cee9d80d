import RelayCore
import Testing

@Suite("Command parsing")
struct CommandParserTests {
    let parser = CommandParser(customCommands: ["eli5"])

    func parse(_ line: String) throws -> Command { try parser.parse(line) }

    func errorMessage(_ line: String) -> String? {
        do {
            _ = try parser.parse(line)
            return nil
        } catch {
            return error.message
        }
    }

    static let french = Language(code: "fr", name: "French")

    @Test(
        "every built-in and alias parses",
        arguments: [
            ("/translate fr Good morning", CommandKind.translate(french), "Good morning"),
            ("/translate French Good morning", .translate(french), "Good morning"),
            ("/translate to french Good morning", .translate(french), "Good morning"),
            ("/translate fr: Good morning", .translate(french), "Good morning"),
            ("/translate Good morning", .translate(nil), "Good morning"),
            ("/translate fr", .translate(french), ""),
            ("/translate brazilian portuguese Good morning", .translate(Language(code: "pt-br", name: "Brazilian Portuguese")), "Good morning"),
            ("/translate it is raining", .translate(nil), "it is raining"),
            ("/translate it Good morning", .translate(Language(code: "it", name: "Italian")), "Good morning"),
            ("/translate to it is raining", .translate(Language(code: "it", name: "Italian")), "is raining"),
            ("/fix its a beatiful day", .action(.grammar), "its a beatiful day"),
            ("/grammar its a beatiful day", .action(.grammar), "its a beatiful day"),
            ("/rewrite formal hey send the file", .action(.rewrite(style: .formal)), "hey send the file"),
            ("/rewrite hey send the file", .action(.rewrite(style: nil)), "hey send the file"),
            ("/rewrite clearer hey", .action(.rewrite(style: nil)), "hey"),
            ("/formal hey send the file", .action(.rewrite(style: .formal)), "hey send the file"),
            ("/casual Dear Sir", .action(.rewrite(style: .casual)), "Dear Sir"),
            ("/shorter a long text", .action(.rewrite(style: .shorter)), "a long text"),
            ("/longer short", .action(.rewrite(style: .longer)), "short"),
            ("/friendly no.", .action(.rewrite(style: .friendly)), "no."),
            ("/professional lol ok", .action(.rewrite(style: .professional)), "lol ok"),
            ("/summarize", .action(.summarize), ""),
            ("/summarize a b c", .action(.summarize), "a b c"),
            ("/explain CRDTs", .action(.explain), "CRDTs"),
            ("/extract notes", .action(.extract), "notes"),
            ("/ai three cat names", .action(.freeform), "three cat names"),
            ("/ask three cat names", .action(.freeform), "three cat names"),
            ("/tribunal The Eiffel Tower is in Berlin", .tribunal, "The Eiffel Tower is in Berlin"),
            ("/factcheck The Eiffel Tower is in Berlin", .tribunal, "The Eiffel Tower is in Berlin"),
            ("/history", .history(.show), ""),
            ("/history clear", .history(.clear), ""),
            ("/history last", .history(.last(page: 1)), ""),
            ("/history LAST 12", .history(.last(page: 12)), ""),
            ("/help", .help(topic: nil), ""),
            ("/help /translate", .help(topic: "translate"), ""),
            ("/eli5 black holes", .custom(name: "eli5"), "black holes"),
            ("/run polish its done", .chain(.run(name: "polish")), "its done"),
            ("/chain run polish its done", .chain(.run(name: "polish")), "its done"),
            ("/chain list", .chain(.list), ""),
            ("/chain show polish", .chain(.show(name: "polish")), ""),
            ("/chain delete polish", .chain(.delete(name: "polish")), ""),
            ("/chain export", .chain(.export(name: nil)), ""),
            ("/chain export polish", .chain(.export(name: "polish")), ""),
            ("/chain save polish = input > grammar > output", .chain(.save(name: "polish", source: "input > grammar > output")), ""),
            (
                "/chain import a = grammar\nb = explain",
                .chain(.importDefinitions([ChainDefinition(name: "a", source: "grammar", line: 1), ChainDefinition(name: "b", source: "explain", line: 2)])), ""
            ),
            ("/command add eli5 Explain like I'm five: {input}", .command(.add(name: "eli5", template: "Explain like I'm five: {input}")), ""),
            ("/command list", .command(.list), ""),
            ("/command remove eli5", .command(.remove(name: "eli5")), ""),
            ("/settings", .settings(.show), ""),
            ("/settings lang French", .settings(.set(.me, .lang, value: "fr")), ""),
            ("/settings channel tier mid", .settings(.set(.channel, .tier, value: "mid")), ""),
            ("/settings retention metadata", .settings(.set(.me, .retention, value: "metadata")), ""),
            ("/settings retention off", .settings(.set(.me, .retention, value: "off")), ""),
            ("/settings tier reset", .settings(.set(.me, .tier, value: nil)), ""),
            ("/settings reset", .settings(.reset(.me)), ""),
            ("/settings channel reset", .settings(.reset(.channel)), ""),
        ])
    func parses(line: String, kind: CommandKind, text: String) throws {
        let command = try parse(line)
        #expect(command.kind == kind)
        #expect(command.text == text)
    }

    @Test func slashIsOptionalAndBotSuffixIsAccepted() throws {
        #expect(try parse("translate fr hi").kind == .translate(Self.french))
        #expect(try parse("/translate@rhea_bot fr hi").kind == .translate(Self.french))
        #expect(try parse("/FIX teh").kind == .action(.grammar))
    }

    @Test func catchAllRheaRunsTheInnerCommand() throws {
        let command = try parse("/rhea translate fr hi")
        #expect(command.kind == .translate(Self.french))
        #expect(command.text == "hi")
        #expect(try parse("/rhea").kind == .help(topic: nil))
    }

    @Test func optionsAnywhereAreRemovedAndTheTextKeepsItsLines() throws {
        let command = try parse("/tribunal --k 5 --tier=frontier The sky\nis green --private")
        #expect(command.options == CommandOptions(tier: .frontier, isPrivate: true, k: 5))
        #expect(command.text == "The sky\nis green")
        let literal = try parse("/fix -- --private is a flag")
        #expect(literal.text == "--private is a flag")
        #expect(literal.options.isPrivate == false)
        #expect(try parse("/fix well -- maybe").text == "well -- maybe")
    }

    @Test(
        "bad input names what is wrong",
        arguments: [
            ("", "Type a command"),
            ("/transalte fr hi", "Did you mean `/translate`?"),
            ("/eli6 x", "Did you mean `/eli5`?"),
            ("/zzzzzzzz", "Type `/help`"),
            ("/fix --tier gold hi", "Unknown tier `gold`"),
            ("/fix --tier", "`--tier` needs a value"),
            ("/fix --verbose hi", "Unknown option `--verbose`"),
            ("/fix --k 3 hi", "`--k` only applies to `/tribunal`"),
            ("/tribunal --k 11 x", "from 2 to 10"),
            ("/chain save polish input > grammar", "`NAME = DSL`"),
            ("/chain save 9lives = grammar", "not a valid chain name"),
            ("/chain frobnicate", "Unknown `/chain frobnicate`"),
            ("/chain import a = grammar\n\nb grammar", "Nothing imported: line 2: Write the chain as `NAME = DSL`"),
            ("/chain import a = grammar\n9lives = explain", "Nothing imported: line 2: `9lives` is not a valid chain name"),
            ("/chain show", "Which chain?"),
            ("/run", "Which chain?"),
            ("/command add eli5", "needs a template"),
            ("/command add", "Name the command"),
            ("/settings lang klingon", "Unknown language `klingon`"),
            ("/settings tier gold", "Unknown tier `gold`"),
            ("/settings volume 3", "Unknown setting `volume`"),
            ("/settings reset lang", "`/settings reset` takes nothing after it"),
            ("/settings lang", "Give a value for lang"),
            ("/history last 0", "takes a page number from 1"),
            ("/history last two", "`two` is not one"),
            ("/history everything", "`/history last [PAGE]` shows the last one whole"),
        ])
    func errors(line: String, expected: String) {
        let message = errorMessage(line)
        #expect(message?.contains(expected) == true, "\(line) → \(message ?? "parsed")")
    }

    @Test func helpIsGeneratedFromTheTable() {
        for spec in CommandTable.all {
            #expect(!spec.summary.isEmpty && spec.usage.hasPrefix("/\(spec.name)"))
            #expect(CommandTable.spec(named: spec.name) == spec)
            for alias in spec.aliases { #expect(CommandTable.spec(named: alias) == spec) }
        }
    }
}
