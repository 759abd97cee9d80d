import RelayCore
import Testing

@Suite("Chain DSL")
struct ChainDSLTests {
    let parser = ChainParser(customCommands: ["eli5"])

    @Test(
        "canonical chains print back identically",
        arguments: [
            "input > grammar > rewrite:formal > verify:80 > output",
            "input:thread > summarize > translate:fr > output:private",
            "model:mid \"Summarize for a CEO: {input}\" > verify:90 escalate",
            "model > explain > extract",
            "grammar > loop:3 > rewrite > eli5 > output",
            "model \"say \\\"hi\\\" to {input} with a back\\\\slash\"",
            "translate > rewrite:shorter",
        ])
    func roundTrip(source: String) throws {
        let chain = try parser.parse(source)
        #expect(chain.dsl == source)
        #expect(try parser.parse(chain.dsl) == chain)
    }

    @Test func alternativeSeparatorsAndSpellingsNormalise() throws {
        let chain = try parser.parse("input->grammar  →  translate:French>fix>output")
        #expect(chain.dsl == "input > grammar > translate:fr > grammar > output")
        #expect(chain.blocks.count == 5)
    }

    @Test func blocksHaveTheirMeaning() throws {
        let chain = try parser.parse("input:thread > model:frontier \"x {input}\" > loop:2 > verify:75 escalate > eli5 > output:private")
        #expect(
            chain.blocks == [
                .input(thread: true), .model(tier: .frontier, prompt: "x {input}"), .loop(times: 2),
                .verify(threshold: 75, escalate: true), .custom(name: "eli5"), .output(isPrivate: true),
            ])
    }

    func error(_ source: String, parser: ChainParser? = nil) -> ChainParseError? {
        do {
            _ = try (parser ?? self.parser).parse(source)
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "errors name the block, the column and what was expected",
        arguments: [
            ("", 0, 1, "empty"),
            ("input > gramar", 2, 9, "Did you mean `grammar`?"),
            ("input > verify:abc", 2, 16, "threshold from 50 to 100"),
            ("input > verify:40", 2, 16, "threshold from 50 to 100"),
            ("input > verify", 2, 9, "found `nothing`"),
            ("input > verify:80 now", 2, 19, "only takes the word `escalate`"),
            ("input > loop:3", 2, 9, "must call a model"),
            ("grammar > loop:11", 2, 16, "count from 2 to 10"),
            ("grammar > output > explain", 2, 11, "last block"),
            ("grammar > input", 2, 11, "first block"),
            ("grammar > > explain", 2, 11, "expected a block name after `>`"),
            ("grammar >", 2, 10, "found the end"),
            ("model \"unclosed", 1, 7, "not closed"),
            ("grammar \"text\"", 1, 9, "only goes with `model`"),
            ("rewrite:pirate", 1, 9, "expects a style"),
            ("translate:xx", 1, 11, "language code"),
            ("model:gold", 1, 7, "tier"),
            ("summarize:now", 1, 11, "takes no argument"),
            ("input:everything", 1, 7, "only `:thread`"),
            ("output:public", 1, 8, "only `:private`"),
            ("grammar:", 1, 9, "expected a value"),
        ])
    func errors(source: String, block: Int, column: Int, expected: String) {
        let error = error(source)
        #expect(error?.block == block, "\(source): \(error?.description ?? "parsed")")
        #expect(error?.column == column, "\(source): \(error?.description ?? "parsed")")
        #expect(error?.message.contains(expected) == true, "\(source): \(error?.description ?? "parsed")")
    }

    @Test func limitsAreEnforced() {
        let tooLong = Array(repeating: "grammar", count: 17).joined(separator: " > ")
        #expect(error(tooLong)?.message.contains("at most 16 blocks") == true)
        #expect(error(tooLong)?.block == 17)

        let small = ChainParser(limits: ChainLimits(maxBlocks: 16, maxModelCalls: 5, maxLoop: 10), verifyModels: 3)
        let expensive = error("grammar > loop:4 > verify:80", parser: small)
        #expect(expensive?.message.contains("at least 7 model calls; the limit is 5") == true)
        #expect(expensive?.block == 3)
        #expect(error("grammar > loop:5", parser: small) == nil)
    }

    @Test func customCommandsAreBlocksOnlyWhenTheTeamHasThem() {
        #expect(error("eli5 > output") == nil)
        #expect(error("eli5 > output", parser: ChainParser())?.message.contains("unknown block `eli5`") == true)
    }
}
