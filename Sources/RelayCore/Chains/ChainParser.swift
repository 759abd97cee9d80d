/// Parses the chain DSL.
///
/// ```
/// chain  := block ( ">" block )*        ("->" and "→" also separate blocks)
/// block  := NAME [ ":" ARG ] [ "\"" TEXT "\"" ] [ WORD ... ]
/// ```
/// Checks the limits and block positions as it goes, so a saved chain can always run.
public struct ChainParser: Sendable {
    public var limits: ChainLimits
    /// The team's custom command names, usable as blocks.
    public var customCommands: Set<String>
    /// Models a `verify` block asks, for the model-call estimate.
    public var verifyModels: Int

    public init(limits: ChainLimits = ChainLimits(), customCommands: Set<String> = [], verifyModels: Int = 3) {
        self.limits = limits
        self.customCommands = customCommands
        self.verifyModels = verifyModels
    }

    public func parse(_ source: String) throws(ChainParseError) -> Chain {
        var scanner = Scanner(Array(source))
        var blocks: [Block] = []
        var modelCalls = 0
        var lastCost = 0
        scanner.skipSpaces()
        if scanner.atEnd {
            throw ChainParseError(block: 0, column: 1, message: "The chain is empty: expected blocks such as `input > grammar > output`.")
        }
        while true {
            let number = blocks.count + 1
            scanner.skipSpaces()
            let column = scanner.column
            if number > limits.maxBlocks {
                throw ChainParseError(block: number, column: column, message: "a chain has at most \(limits.maxBlocks) blocks.")
            }
            let raw = try scanner.readBlock(number: number)
            let block = try interpret(raw, number: number)
            try checkPosition(block, number: number, column: column, previous: blocks.last, isLast: scanner.atEnd)

            // Static model-call estimate: verify asks several models; loop repeats its block's cost.
            let cost: Int
            switch block {
            case .verify: cost = verifyModels
            case .loop(let times): cost = lastCost * (times - 1)
            default: cost = block.transformsText ? 1 : 0
            }
            modelCalls += cost
            if case .loop = block {} else { lastCost = cost }
            if modelCalls > limits.maxModelCalls {
                throw ChainParseError(
                    block: number, column: column,
                    message: "this chain would make at least \(modelCalls) model calls; the limit is \(limits.maxModelCalls) per run.")
            }
            blocks.append(block)
            if scanner.atEnd { break }
        }
        return Chain(blocks: blocks)
    }

    /// Turns a block's words into a `Block`, checking its argument.
    private func interpret(_ raw: RawBlock, number: Int) throws(ChainParseError) -> Block {
        func fail(_ message: String, at column: Int? = nil) -> ChainParseError {
            ChainParseError(block: number, column: column ?? raw.nameColumn, message: message)
        }
        let name = raw.name.lowercased()
        let argColumn = raw.argColumn ?? raw.nameColumn

        if raw.text != nil && name != "model" {
            throw fail("quoted text only goes with `model` (`model \"Summarize: {input}\"`).", at: raw.textColumn)
        }
        let allowedWords: Set<String> = name == "verify" ? ["escalate"] : []
        if let word = raw.words.first(where: { !allowedWords.contains($0.text.lowercased()) }) {
            let hint = name == "verify" ? "`verify` only takes the word `escalate`" : "expected `>` and the next block"
            throw fail("unexpected `\(word.text)`: \(hint).", at: word.column)
        }
        func noArgument() throws(ChainParseError) {
            if let arg = raw.arg { throw fail("`\(name)` takes no argument, found `:\(arg)`.", at: argColumn) }
        }

        switch name {
        case "input":
            guard let arg = raw.arg else { return .input(thread: false) }
            guard arg.lowercased() == "thread" else { throw fail("`input` takes only `:thread`, found `\(arg)`.", at: argColumn) }
            return .input(thread: true)
        case "model":
            var tier: Tier?
            if let arg = raw.arg {
                guard let parsed = Tier(rawValue: arg.lowercased()) else {
                    throw fail("`model` expects a tier: cheap, mid or frontier, found `\(arg)`.", at: argColumn)
                }
                tier = parsed
            }
            return .model(tier: tier, prompt: raw.text)
        case "translate":
            guard let arg = raw.arg else { return .action(.translate(nil)) }
            guard let language = Language.lookup(arg) else {
                throw fail("`translate` expects a language code or English name (`translate:fr`), found `\(arg)`.", at: argColumn)
            }
            return .action(.translate(language))
        case "rewrite":
            guard let arg = raw.arg else { return .action(.rewrite(nil)) }
            guard let style = RewriteStyle(rawValue: arg.lowercased()) else {
                let styles = RewriteStyle.allCases.map(\.rawValue).joined(separator: ", ")
                throw fail("`rewrite` expects a style: \(styles), found `\(arg)`.", at: argColumn)
            }
            return .action(.rewrite(style))
        case "summarize", "extract", "grammar", "fix", "explain":
            try noArgument()
            switch name {
            case "summarize": return .action(.summarize)
            case "extract": return .action(.extract)
            case "explain": return .action(.explain)
            default: return .action(.grammar)
            }
        case "verify":
            guard let arg = raw.arg, let threshold = Int(arg), (50...100).contains(threshold) else {
                throw fail("`verify` expects an agreement threshold from 50 to 100 (`verify:80`), found `\(raw.arg ?? "nothing")`.", at: argColumn)
            }
            return .verify(threshold: threshold, escalate: !raw.words.isEmpty)
        case "loop":
            guard let arg = raw.arg, let times = Int(arg), (2...limits.maxLoop).contains(times) else {
                throw fail("`loop` expects a count from 2 to \(limits.maxLoop) (`loop:3`), found `\(raw.arg ?? "nothing")`.", at: argColumn)
            }
            return .loop(times: times)
        case "output":
            guard let arg = raw.arg else { return .output(isPrivate: false) }
            guard arg.lowercased() == "private" else { throw fail("`output` takes only `:private`, found `\(arg)`.", at: argColumn) }
            return .output(isPrivate: true)
        default:
            guard customCommands.contains(name) else {
                let known = ChainBlockName.builtins.joined(separator: ", ")
                var message = "unknown block `\(raw.name)`: expected one of \(known), or a custom command of this team."
                let candidates = ChainBlockName.builtins + customCommands.sorted()
                if let best = candidates.min(by: { EditDistance.between(name, $0) < EditDistance.between(name, $1) }),
                    EditDistance.between(name, best) <= 2
                {
                    message += " Did you mean `\(best)`?"
                }
                throw fail(message)
            }
            try noArgument()
            return .custom(name: name)
        }
    }

    private func checkPosition(_ block: Block, number: Int, column: Int, previous: Block?, isLast: Bool) throws(ChainParseError) {
        switch block {
        case .input where number != 1:
            throw ChainParseError(block: number, column: column, message: "`input` can only be the first block.")
        case .output where !isLast:
            throw ChainParseError(block: number, column: column, message: "`output` can only be the last block.")
        case .loop:
            guard let previous, previous.transformsText else {
                throw ChainParseError(
                    block: number, column: column,
                    message: "`loop` repeats the block before it, which must call a model (model, an action or a custom command).")
            }
        default:
            break
        }
    }
}

/// A block as written, before interpretation.
struct RawBlock {
    struct Word {
        var text: String
        var column: Int
    }
    var name: String
    var nameColumn: Int
    var arg: String?
    var argColumn: Int?
    var text: String?
    var textColumn: Int?
    var words: [Word]
}

/// Character scanner with 1-based columns.
private struct Scanner {
    let chars: [Character]
    var position = 0

    init(_ chars: [Character]) {
        self.chars = chars
    }

    var atEnd: Bool { position >= chars.count }
    var column: Int { position + 1 }
    var current: Character? { atEnd ? nil : chars[position] }

    mutating func skipSpaces() {
        while let c = current, c.isWhitespace { position += 1 }
    }

    /// At a separator (`>`, `->`, `→`)?
    func separatorLength() -> Int {
        guard let c = current else { return 0 }
        if c == ">" || c == "→" { return 1 }
        if c == "-", position + 1 < chars.count, chars[position + 1] == ">" { return 2 }
        return 0
    }

    static func isNameChar(_ c: Character) -> Bool {
        (c.isLetter || c.isNumber || c == "_" || c == "-") && c != "→"
    }

    mutating func readIdentifier() -> String {
        var out = ""
        while let c = current, Self.isNameChar(c), separatorLength() == 0 {
            out.append(c)
            position += 1
        }
        return out
    }

    /// Reads one block up to the next separator (consumed) or the end.
    mutating func readBlock(number: Int) throws(ChainParseError) -> RawBlock {
        skipSpaces()
        let nameColumn = column
        guard let first = current, first.isLetter else {
            let found = current.map { "`\($0)`" } ?? "the end"
            let message =
                number == 1
                ? "expected a block name such as `input` or `grammar`, found \(found)."
                : "expected a block name after `>`, found \(found)."
            throw ChainParseError(block: number, column: nameColumn, message: message)
        }
        var block = RawBlock(name: readIdentifier(), nameColumn: nameColumn, words: [])
        if current == ":" {
            position += 1
            block.argColumn = column
            let arg = readIdentifier()
            if arg.isEmpty {
                throw ChainParseError(block: number, column: column, message: "expected a value after `\(block.name):`.")
            }
            block.arg = arg
        }
        skipSpaces()
        if current == "\"" {
            block.textColumn = column
            block.text = try readQuoted(number: number)
            skipSpaces()
        }
        while !atEnd, separatorLength() == 0 {
            let wordColumn = column
            let word = readIdentifier()
            if word.isEmpty {
                let found = current == "\"" ? "a second quoted text" : "`\(current!)`"
                throw ChainParseError(block: number, column: wordColumn, message: "unexpected \(found): expected `>` and the next block.")
            }
            block.words.append(RawBlock.Word(text: word, column: wordColumn))
            skipSpaces()
        }
        let separator = separatorLength()
        if separator > 0 {
            position += separator
            skipSpaces()
            if atEnd {
                throw ChainParseError(block: number + 1, column: column, message: "expected a block after the last `>`, found the end.")
            }
        }
        return block
    }

    mutating func readQuoted(number: Int) throws(ChainParseError) -> String {
        let start = column
        position += 1
        var out = ""
        while let c = current {
            position += 1
            if c == "\\", let next = current {
                out.append(next)
                position += 1
            } else if c == "\"" {
                return out
            } else {
                out.append(c)
            }
        }
        throw ChainParseError(block: number, column: start, message: "the quoted text is not closed: expected a closing `\"`.")
    }
}
