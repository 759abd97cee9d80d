/// Where a command may take its input from when none is typed after it.
public struct InputSources: Sendable, Hashable {
    public var reply: Bool
    public var thread: Bool

    public static let none = InputSources(reply: false, thread: false)
    public static let replyOnly = InputSources(reply: true, thread: false)
    public static let replyOrThread = InputSources(reply: true, thread: true)
}

/// One built-in command: the single source for parsing, `/help` and "did you mean".
public struct CommandSpec: Sendable, Hashable {
    public var name: String
    public var aliases: [String]
    public var summary: String
    public var usage: String
    public var examples: [String]
    /// Nil for commands that take no text input.
    public var input: InputSources?
    /// What `/help` and the no-input reply call the input ("the text to translate").
    public var inputNoun: String
    /// More that `/help COMMAND` says after the summary.
    public var details: [String]

    public init(
        name: String, aliases: [String] = [], summary: String, usage: String, examples: [String],
        input: InputSources?, inputNoun: String = "the text", details: [String] = []
    ) {
        self.name = name
        self.aliases = aliases
        self.summary = summary
        self.usage = usage
        self.examples = examples
        self.input = input
        self.inputNoun = inputNoun
        self.details = details
    }
}

/// The one command table.
public enum CommandTable {
    public static let all: [CommandSpec] =
        [
            CommandSpec(
                name: "translate", summary: "Translate text (default language from /settings, else English).",
                usage: "/translate [to] [LANGUAGE] TEXT", examples: ["/translate fr Good morning", "/translate to German See you soon"],
                input: .replyOnly, inputNoun: "the text to translate"),
            CommandSpec(
                name: "fix", aliases: ["grammar"], summary: "Fix grammar and spelling.", usage: "/fix TEXT",
                examples: ["/fix its a beatiful day"], input: .replyOnly, inputNoun: "the text to fix"),
            CommandSpec(
                name: "rewrite", summary: "Rewrite in a style: formal, casual, shorter, longer, friendly, professional (default: clearer).",
                usage: "/rewrite [STYLE] TEXT", examples: ["/rewrite shorter We would like to kindly ask you to..."],
                input: .replyOnly, inputNoun: "the text to rewrite"),
        ]
        + RewriteStyle.allCases.map { style in
            CommandSpec(
                name: style.rawValue,
                summary: "Rewrite \(style.rawValue == "shorter" || style.rawValue == "longer" ? style.rawValue : "in a \(style.rawValue) style").",
                usage: "/\(style.rawValue) TEXT", examples: ["/\(style.rawValue) hey send me the file"],
                input: .replyOnly, inputNoun: "the text to rewrite")
        } + [
            CommandSpec(
                name: "summarize", summary: "Summarize text, the replied-to message, or the thread.", usage: "/summarize [TEXT]",
                examples: ["/summarize (inside a thread)"], input: .replyOrThread, inputNoun: "the text to summarize"),
            CommandSpec(
                name: "explain", summary: "Explain simply.", usage: "/explain TEXT", examples: ["/explain what a CRDT is"],
                input: .replyOnly, inputNoun: "what to explain"),
            CommandSpec(
                name: "extract", summary: "Key facts and action items.", usage: "/extract [TEXT]",
                examples: ["/extract (replying to meeting notes)"], input: .replyOrThread, inputNoun: "the text to extract from"),
            CommandSpec(
                name: "ai", aliases: ["ask"], summary: "Ask anything (free-form prompt).", usage: "/ai PROMPT",
                examples: ["/ai Give me three names for a cat"], input: .replyOnly, inputNoun: "your prompt"),
            CommandSpec(
                name: "tribunal", aliases: ["factcheck"], summary: "Several models judge a claim; shows their agreement.",
                usage: "/tribunal [--k N] CLAIM", examples: ["/tribunal The Eiffel Tower is in Berlin", "/tribunal --k 5 (replying to a message)"],
                input: .replyOrThread, inputNoun: "the claim to check",
                details: [
                    "The score, on the built-in council: the probability that the verdict is right. Each model's vote weighs by the accuracy the council estimated for it from the ledger's fact-checks (how the models agree and disagree, and the verdicts people marked with `/ledger mark`), not by the confidence it states; the probability is then rescaled to match the fact-checks people marked. \"3 of 4 agree\" beside it is how many gave the verdict. `/council` shows each model's record.",
                    "On the Rhea Tribunal gateway the score is the models' agreement.",
                ]),
            CommandSpec(
                name: "chain", summary: "Saved chains: save, run, list, show, delete, export, import.",
                usage: "/chain save NAME = DSL | run NAME [TEXT] | list | show NAME | delete NAME | export [NAME] | import NAME = DSL",
                examples: ["/chain save polish = input > grammar > rewrite:professional > verify:80 > output", "/chain run polish its done"],
                input: nil),
            CommandSpec(
                name: "run", summary: "Run a saved chain (short for /chain run).", usage: "/run NAME [TEXT]",
                examples: ["/run polish we has shipped it"], input: nil),
            CommandSpec(
                name: "command", summary: "Custom commands: add, list, remove.",
                usage: "/command add NAME TEMPLATE | list | remove NAME  (placeholders: {input} {context} {user} {lang})",
                examples: ["/command add eli5 Explain like I'm five: {input}"], input: nil),
            CommandSpec(
                name: "settings", summary: "Show or set lang, tier, retention for you or this channel.",
                usage: "/settings | /settings [channel] lang|tier|retention VALUE | /settings [channel] KEY reset",
                examples: ["/settings lang fr", "/settings channel tier mid", "/settings retention metadata"], input: nil),
            CommandSpec(
                name: "history", summary: "Your last 10 results; `clear` deletes your history at once.", usage: "/history [clear]",
                examples: ["/history", "/history clear"], input: nil),
            CommandSpec(
                name: "ledger", summary: "The team's fact-checks: search them, show one judge by judge, export, mark a verdict right or wrong.",
                usage: "/ledger [WORDS] | show ID | export | mark ID true|false|partly",
                examples: ["/ledger eiffel tower", "/ledger show 12", "/ledger mark 12 false", "/ledger export"], input: nil),
            CommandSpec(
                name: "council", summary: "Each council model's estimated accuracy, its number of judged claims and its current weight.",
                usage: "/council", examples: ["/council"], input: nil),
            CommandSpec(name: "help", summary: "List commands, or explain one.", usage: "/help [COMMAND]", examples: ["/help translate"], input: nil),
        ]

    /// Finds a built-in by name or alias.
    public static func spec(named word: String) -> CommandSpec? {
        let key = word.lowercased()
        return all.first { $0.name == key || $0.aliases.contains(key) }
    }

    /// Every word that names a built-in (names and aliases), which custom commands may not take.
    public static var reservedNames: Set<String> {
        Set(all.flatMap { [$0.name] + $0.aliases }).union(["rhea"]).union(ChainBlockName.allNames)
    }
}
