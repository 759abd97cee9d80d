public import Foundation

/// Options every command accepts.
public struct CommandOptions: Sendable, Hashable, Codable {
    /// `--tier`: overrides the settings' tier for this run.
    public var tier: Tier?
    /// `--private`: only the caller sees the reply.
    public var isPrivate: Bool
    /// `--k N`: how many models judge (tribunal, chains with verify).
    public var k: Int?

    public init(tier: Tier? = nil, isPrivate: Bool = false, k: Int? = nil) {
        self.tier = tier
        self.isPrivate = isPrivate
        self.k = k
    }
}

/// A parsed request: which action, its arguments, and the text typed after it.
public struct Command: Sendable, Hashable, Codable {
    public var kind: CommandKind
    /// The text typed after the command and its arguments; empty when none (input then
    /// comes from the replied-to message or the thread, see `InputResolver`).
    public var text: String
    public var options: CommandOptions

    public init(kind: CommandKind, text: String = "", options: CommandOptions = CommandOptions()) {
        self.kind = kind
        self.text = text
        self.options = options
    }
}

public enum CommandKind: Sendable, Hashable, Codable {
    /// Translate; nil language means "from settings, else English".
    case translate(Language?)
    /// grammar, rewrite, summarize, explain, extract, freeform.
    case action(QuickAction)
    case tribunal
    /// The words of a voice note (its own, or the replied-to message's).
    case transcribe
    case chain(ChainSubcommand)
    case custom(name: String)
    case command(CustomCommandSubcommand)
    case settings(SettingsSubcommand)
    case history(HistorySubcommand)
    case ledger(LedgerSubcommand)
    /// What the council has learned of its judges.
    case council
    /// Who administers the team here; granting and revoking the role.
    case admin(AdminSubcommand)
    /// What the asker, or the team, spent on models in a month.
    case usage(UsageSubcommand)
    case help(topic: String?)

    /// The built-in this command is, its entry in the command table; nil for a team's custom
    /// command, which has none.
    public var builtin: BuiltinCommand? {
        switch self {
        case .translate: .translate
        case .action(let action): BuiltinCommand(action)
        case .tribunal: .tribunal
        case .transcribe: .transcribe
        case .chain(.run): .run
        case .chain: .chain
        case .custom: nil
        case .command: .command
        case .settings: .settings
        case .history: .history
        case .ledger: .ledger
        case .council: .council
        case .admin: .admin
        case .usage: .usage
        case .help: .help
        }
    }

    /// The built-in's table name (or the custom command's name), for history and metrics.
    public var name: String {
        if case .custom(let name) = self { return name }
        return builtin?.name ?? ""
    }
}

extension CommandKind {
    /// Whether only the team's admins may run it (docs/admin.md): what changes what the whole
    /// team uses — channel settings, the team's chains and custom commands, the ledger's marks
    /// (which train the council) and who else is an admin. Showing, listing and running stay
    /// open to everyone; one's own settings and history stay one's own.
    public var needsAdmin: Bool {
        switch self {
        case .settings(.set(.channel, _, _)), .settings(.reset(.channel)): true
        case .chain(.save), .chain(.delete), .chain(.importDefinitions): true
        case .command(.add), .command(.remove): true
        case .ledger(.mark): true
        case .admin(.grant), .admin(.revoke): true
        case .admin(.budget(.set)), .admin(.budget(.reset)): true
        case .admin(.console): true
        default: false
        }
    }

    /// Whether it may ask a model (and so spend from the team's budget): the quick actions,
    /// a tribunal, a chain run, a team's custom command. Transcribing asks the speech service,
    /// which has no price here.
    public var asksModels: Bool {
        switch self {
        case .translate, .action, .tribunal, .chain(.run), .custom: true
        default: false
        }
    }
}

extension CommandKind {
    /// Whether the command shows or changes what the team keeps for itself: its chains (list,
    /// show, export, save, import, delete), its custom commands (list, add, remove) and its
    /// channel settings. A guest from another organisation may not (`Event.isExternal`); running
    /// a chain or a custom command, and one's own settings and history, stay open to them.
    public var managesTeamData: Bool {
        switch self {
        case .chain(.run): false
        case .chain, .command: true
        case .settings(.set(.channel, _, _)), .settings(.reset(.channel)): true
        case .ledger, .admin: true
        case .usage(let sub): sub.team
        default: false
        }
    }
}

public enum ChainSubcommand: Sendable, Hashable, Codable {
    case save(name: String, source: String)
    case run(name: String)
    case list
    case show(name: String)
    case delete(name: String)
    /// nil exports every chain of the team.
    case export(name: String?)
    /// One or more `NAME = DSL` lines, each split into its name and its blocks' source.
    case importDefinitions([ChainDefinition])
}

/// One `NAME = DSL` line of `/chain import`: the name checked, the source still to be compiled
/// (`ChainParser`, with the team's custom commands and models the run knows).
public struct ChainDefinition: Sendable, Hashable, Codable {
    public var name: String
    public var source: String
    /// Its line among those imported (from 1, blank and comment lines not counted), named when
    /// its source does not compile.
    public var line: Int

    public init(name: String, source: String, line: Int) {
        self.name = name
        self.source = source
        self.line = line
    }
}

public enum CustomCommandSubcommand: Sendable, Hashable, Codable {
    case add(name: String, template: String)
    case list
    case remove(name: String)
}

public enum HistorySubcommand: Sendable, Hashable, Codable {
    /// The asker's last results.
    case show
    /// Deletes all of the asker's history in the team, at once.
    case clear
    /// The asker's last result whole, one page (from 1) of `LongReply.pageCharacters` at a time:
    /// where a reply too long for the chat was cut, the rest is read here.
    case last(page: Int)
}

/// What `/ledger mark` says: the right verdict, or that the recorded one was right or wrong
/// (a 👍 or 👎 on the reply).
public enum LedgerMarkValue: Sendable, Hashable, Codable {
    case verdict(Verdict)
    case right
    case wrong
}

/// The team's fact-check ledger (issue 14).
public enum LedgerSubcommand: Sendable, Hashable, Codable {
    /// Entries whose claim holds every word, newest first; no words: the newest.
    case search(words: [String])
    /// One entry, judge by judge.
    case show(id: Int64)
    /// The team's whole ledger as JSON Lines.
    case export
    /// A person's word on the right verdict.
    case mark(id: Int64, as: LedgerMarkValue)
}

/// `/admin`: the team's admins are the platform's own (docs/admin.md), the operator's list
/// (`ADMIN_USERS`) and those an admin granted the role here.
/// `/usage [team] [YYYY-MM]`: the asker's calls, or the team's, in a month (UTC; nil: this one).
public struct UsageSubcommand: Sendable, Hashable, Codable {
    public var team: Bool
    public var month: UsageMonth?

    public init(team: Bool, month: UsageMonth? = nil) {
        self.team = team
        self.month = month
    }
}

/// A calendar month in UTC, the period usage and budgets count in.
public struct UsageMonth: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public var year: Int
    /// 1…12.
    public var month: Int

    public init?(year: Int, month: Int) {
        guard (2000...9999).contains(year), (1...12).contains(month) else { return nil }
        self.year = year
        self.month = month
    }

    /// `2026-12`.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2, let year = Int(parts[0]), let month = Int(parts[1]) else { return nil }
        self.init(year: year, month: month)
    }

    /// The month `date` falls in, in UTC.
    public init(containing date: Date) {
        let parts = Self.calendar.dateComponents([.year, .month], from: date)
        year = parts.year ?? 1970
        month = parts.month ?? 1
    }

    public var description: String { String(format: "%04d-%02d", year, month) }

    /// "December 2026".
    public var name: String { "\(Self.names[month - 1]) \(year)" }

    /// Its first instant.
    public var start: Date { Self.calendar.date(from: DateComponents(year: year, month: month, day: 1))! }

    /// The next month's first instant.
    public var end: Date { Self.calendar.date(byAdding: .month, value: 1, to: start)! }

    public static func < (lhs: UsageMonth, rhs: UsageMonth) -> Bool { (lhs.year, lhs.month) < (rhs.year, rhs.month) }

    private static let names = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
    ]

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}

public enum AdminSubcommand: Sendable, Hashable, Codable {
    /// Whether the asker administers the team, who was granted the role here, and the asker's
    /// id as `ADMIN_USERS` names it.
    case show
    /// Gives the team's admin role to a user, named as typed (`@ann`; `<@123>` as Discord
    /// writes a mention): the run resolves it to the platform's user id.
    case grant(user: String)
    /// Takes back a role granted here (not a platform's own, nor the operator's list).
    case revoke(user: String)
    /// The team's monthly budget: shown, set (US dollars, above 0) or back to the operator's
    /// default (nil).
    case budget(BudgetChange)
    /// A one-time link to the team's web console (docs/console.md), sent where the asker alone
    /// reads it.
    case console
}

/// `/admin budget`, `/admin budget 20`, `/admin budget reset`.
public enum BudgetChange: Sendable, Hashable, Codable {
    case show
    case set(Double)
    case reset
}

public enum SettingsTarget: String, Sendable, Hashable, Codable {
    case me, channel
}

public enum SettingsKey: String, Sendable, Hashable, CaseIterable, Codable {
    case lang, tier, retention, voice, receipts
}

public enum SettingsSubcommand: Sendable, Hashable, Codable {
    case show
    /// A nil value resets the key.
    case set(SettingsTarget, SettingsKey, value: String?)
    /// Every key of the scope back to its default.
    case reset(SettingsTarget)
}

/// Why a command line could not be parsed: what was wrong and how to fix it.
public struct CommandError: Error, Sendable, Hashable, Codable {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }
}

// MARK: - The command table

/// One built-in command: the key of the command table, so code that means a built-in names it
/// as a value and the compiler checks that every one has its entry. A typed word becomes one
/// only through `init(named:)`.
public enum BuiltinCommand: Sendable, Hashable, CaseIterable {
    case translate
    /// Grammar and spelling (also `/grammar`).
    case fix
    /// `/rewrite`, the style picked from the text (default: clearer); with a style, that style's
    /// own command (`/formal`, `/shorter`…).
    case rewrite(RewriteStyle?)
    case summarize
    case explain
    case extract
    /// A free-form prompt (also `/ask`).
    case ai
    case tribunal
    /// A voice note's words.
    case transcribe
    case chain
    /// Short for `/chain run`.
    case run
    /// Custom commands: add, list, remove.
    case command
    case settings
    case history
    case ledger
    case council
    case admin
    case usage
    case help

    /// Every built-in in the order `/help`, Telegram's menu and Discord's registration list them.
    public static let allCases: [BuiltinCommand] =
        [.translate, .fix, .rewrite(nil)] + RewriteStyle.allCases.map { .rewrite($0) } + [
            .summarize, .explain, .extract, .ai, .tribunal, .transcribe, .chain, .run, .command, .settings, .history, .ledger, .council, .admin, .usage, .help,
        ]

    /// Finds a built-in by its name or an alias, case-insensitively: the one lookup of a typed word.
    public init?(named word: String) {
        guard let builtin = Self.byName[word.lowercased()] else { return nil }
        self = builtin
    }

    /// The built-in that asks a model for `action`: `/fix` for grammar, `/ai` for a free-form prompt.
    public init(_ action: QuickAction) {
        switch action {
        case .translate: self = .translate
        case .grammar: self = .fix
        case .rewrite(let style): self = .rewrite(style)
        case .summarize: self = .summarize
        case .explain: self = .explain
        case .extract: self = .extract
        case .freeform: self = .ai
        }
    }

    /// What people type, without the slash.
    public var name: String {
        switch self {
        case .translate: "translate"
        case .fix: "fix"
        case .rewrite(let style): style?.rawValue ?? "rewrite"
        case .summarize: "summarize"
        case .explain: "explain"
        case .extract: "extract"
        case .ai: "ai"
        case .tribunal: "tribunal"
        case .transcribe: "transcribe"
        case .chain: "chain"
        case .run: "run"
        case .command: "command"
        case .settings: "settings"
        case .history: "history"
        case .ledger: "ledger"
        case .council: "council"
        case .admin: "admin"
        case .usage: "usage"
        case .help: "help"
        }
    }

    /// Every name and alias, to its built-in.
    private static let byName: [String: BuiltinCommand] = Dictionary(
        allCases.flatMap { builtin in ([builtin.name] + builtin.spec.aliases).map { ($0, builtin) } }, uniquingKeysWith: { first, _ in first })
}

/// Where a command may take its input from when none is typed after it.
public struct InputSources: Sendable, Hashable {
    public var reply: Bool
    public var thread: Bool

    public static let none = InputSources(reply: false, thread: false)
    public static let replyOnly = InputSources(reply: true, thread: false)
    public static let replyOrThread = InputSources(reply: true, thread: true)
}

/// One built-in command's table entry: the single source for parsing, `/help` and "did you mean".
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

extension BuiltinCommand {
    /// This built-in's entry in the command table; every built-in has one.
    public var spec: CommandSpec {
        switch self {
        case .translate:
            CommandSpec(
                name: name, summary: "Translate text (default language from /settings, else English).",
                usage: "/translate [to] [LANGUAGE] TEXT", examples: ["/translate fr Good morning", "/translate to German See you soon"],
                input: .replyOnly, inputNoun: "the text to translate")
        case .fix:
            CommandSpec(
                name: name, aliases: ["grammar"], summary: "Fix grammar and spelling.", usage: "/fix TEXT",
                examples: ["/fix its a beatiful day"], input: .replyOnly, inputNoun: "the text to fix")
        case .rewrite(nil):
            CommandSpec(
                name: name, summary: "Rewrite in a style: formal, casual, shorter, longer, friendly, professional (default: clearer).",
                usage: "/rewrite [STYLE] TEXT", examples: ["/rewrite shorter We would like to kindly ask you to..."],
                input: .replyOnly, inputNoun: "the text to rewrite")
        case .rewrite(let style?):
            CommandSpec(
                name: name,
                summary: "Rewrite \(style == .shorter || style == .longer ? style.rawValue : "in a \(style.rawValue) style").",
                usage: "/\(name) TEXT", examples: ["/\(name) hey send me the file"],
                input: .replyOnly, inputNoun: "the text to rewrite")
        case .summarize:
            CommandSpec(
                name: name, summary: "Summarize text, the replied-to message, or the thread.", usage: "/summarize [TEXT]",
                examples: ["/summarize (inside a thread)"], input: .replyOrThread, inputNoun: "the text to summarize")
        case .explain:
            CommandSpec(
                name: name, summary: "Explain simply.", usage: "/explain TEXT", examples: ["/explain what a CRDT is"],
                input: .replyOnly, inputNoun: "what to explain")
        case .extract:
            CommandSpec(
                name: name, summary: "Key facts and action items.", usage: "/extract [TEXT]",
                examples: ["/extract (replying to meeting notes)"], input: .replyOrThread, inputNoun: "the text to extract from")
        case .ai:
            CommandSpec(
                name: name, aliases: ["ask"], summary: "Ask anything (free-form prompt).", usage: "/ai PROMPT",
                examples: ["/ai Give me three names for a cat"], input: .replyOnly, inputNoun: "your prompt")
        case .tribunal:
            CommandSpec(
                name: name, aliases: ["factcheck"], summary: "Several models judge a claim; shows their agreement.",
                usage: "/tribunal [--k N] CLAIM", examples: ["/tribunal The Eiffel Tower is in Berlin", "/tribunal --k 5 (replying to a message)"],
                input: .replyOrThread, inputNoun: "the claim to check",
                details: [
                    "The score, on the built-in council: how often a verdict given with that score has turned out right — \"80% likely right\" means about 4 in 5 such verdicts are, judged by how the models agree and disagree across the ledger's fact-checks and by the verdicts people marked with `/ledger mark`; a mistake every model makes alike (a shared blind spot) looks like agreement, and only those marks reveal it.",
                    "With little history it cannot tell the models apart: until about 50 fact-checks (or 10 marked ones) the verdict is the plain majority's and the score says how often a majority that size is right, so it stays modest (an even split reads about 50% likely right); when no model gives a readable verdict there is nothing to be right about, and replies, `/history` and the ledger all say \"No verdict\", with no figure. It sharpens as the ledger grows and as people mark verdicts. \"3 of 4 agree\" beside it is how many gave the verdict; `/council` shows each model's accuracy and how sure it is.",
                    "On the Rhea Tribunal gateway the score is the models' agreement.",
                ])
        case .transcribe:
            CommandSpec(
                name: name, summary: "The words of a voice note: send one captioned /transcribe, or reply /transcribe to one.",
                usage: "/transcribe", examples: ["/transcribe (replying to a voice note)"], input: nil,
                details: [
                    "Any command that takes text hears a voice note too: caption it `/translate fr`, or reply `/summarize` to it. Text typed after the command wins over the voice note.",
                    "In a private chat, a voice note alone is transcribed.",
                ])
        case .chain:
            CommandSpec(
                name: name, summary: "Saved chains: save, run, list, show, delete, export, import.",
                usage: "/chain save NAME = DSL | run NAME [TEXT] | list | show NAME | delete NAME | export [NAME] | import NAME = DSL",
                examples: ["/chain save polish = input > grammar > rewrite:professional > verify:80 > output", "/chain run polish its done"],
                input: nil)
        case .run:
            CommandSpec(
                name: name, summary: "Run a saved chain (short for /chain run).", usage: "/run NAME [TEXT]",
                examples: ["/run polish we has shipped it"], input: nil)
        case .command:
            CommandSpec(
                name: name, summary: "Custom commands: add, list, remove.",
                usage: "/command add NAME TEMPLATE | list | remove NAME  (placeholders: {input} {context} {user} {lang})",
                examples: ["/command add eli5 Explain like I'm five: {input}"], input: nil)
        case .settings:
            CommandSpec(
                name: name, summary: "Show or set lang, tier, retention, voice, receipts for you or this channel.",
                usage:
                    "/settings | /settings [channel] lang|tier|retention|voice|receipts VALUE | /settings [channel] KEY reset | /settings [channel] reset",
                examples: [
                    "/settings lang fr", "/settings channel tier mid", "/settings retention metadata", "/settings voice ai", "/settings receipts on",
                    "/settings reset",
                ],
                input: nil,
                details: [
                    "`voice`: what a voice note sent without a command gets — `transcript` (the default), `ai` (answered as a prompt) or `tribunal` (fact-checked).",
                    "`receipts`: `on` adds what each answer's model calls used to its footer (\"412 tokens · $0.0008\"); `off` (the default) leaves it out.",
                ])
        case .history:
            CommandSpec(
                name: name, summary: "Your last 10 results; `last` shows the last one whole; `clear` deletes your history at once.",
                usage: "/history [last [PAGE] | clear]", examples: ["/history", "/history last", "/history last 2", "/history clear"], input: nil,
                details: [
                    "`last`: an answer too long for the chat is cut after \(LongReply.maxParts) messages; `/history last PAGE` shows it whole, \(LongReply.pageCharacters) characters a page (kept when your retention is `full`)."
                ])
        case .ledger:
            CommandSpec(
                name: name, summary: "The team's fact-checks: search them, show one judge by judge, export, mark a verdict right or wrong.",
                usage: "/ledger [WORDS] | show ID | export | mark ID true|false|partly",
                examples: ["/ledger eiffel tower", "/ledger show 12", "/ledger mark 12 false", "/ledger export"], input: nil)
        case .council:
            CommandSpec(
                name: name, summary: "Each council model's estimated accuracy, its number of judged claims and its current weight.",
                usage: "/council", examples: ["/council"], input: nil)
        case .admin:
            CommandSpec(
                name: name, summary: "Who administers this team here; admins grant and revoke the role.",
                usage: "/admin | /admin grant @USER | /admin revoke @USER | /admin budget [DOLLARS|reset] | /admin console",
                examples: ["/admin", "/admin grant @ann", "/admin budget 20", "/admin console"], input: nil,
                details: [
                    "Admins change channel settings, save, delete and import the team's chains and custom commands, and mark fact-checks. They are the platform's own (workspace or server admins, room moderators…), the operator's list (`ADMIN_USERS`) and whoever an admin granted the role with `/admin grant`.",
                    "`/admin budget 20`: the team's monthly model budget, in US dollars (`reset`: the operator's default, `BUDGET_MONTHLY_USD`). At 80 % the admins are told once; at 100 % commands that ask models are refused until the month turns (UTC).",
                ])
        case .usage:
            CommandSpec(
                name: name, summary: "Tokens and cost of your commands this month, or the team's: by command and by model.",
                usage: "/usage [team] [YYYY-MM]", examples: ["/usage", "/usage team", "/usage team 2026-11"], input: nil,
                details: [
                    "Counted per model call as the backend reports it; where it reports none the count is estimated from the text's length, and marked so. Cost is from the prices the operator configured (`COUNCIL_<MODEL>_PRICE_IN`/`_OUT`); a model without one shows no cost. Months are UTC. `/settings receipts on` adds each reply's tokens and cost to its footer."
                ])
        case .help:
            CommandSpec(name: name, summary: "List commands, or explain one.", usage: "/help [COMMAND]", examples: ["/help translate"], input: nil)
        }
    }
}

/// The one command table, for what lists the built-ins: `/help`, the platforms' command menus.
public enum CommandTable {
    /// Every built-in's entry, in `BuiltinCommand.allCases` order.
    public static let all: [CommandSpec] = BuiltinCommand.allCases.map(\.spec)

    /// The entry of the built-in a typed word names (its name or an alias); nil for any other word.
    public static func spec(named word: String) -> CommandSpec? {
        BuiltinCommand(named: word)?.spec
    }

    /// The command line for the words after a mention of the bot (`@Rhea translate fr hi`), on
    /// every platform where people mention it: a built-in's name, with or without `/`, runs it;
    /// any other word after a `/` is the command the person meant (a team's custom command, or
    /// a typo the parser answers with "did you mean"); other words are a claim to fact-check.
    /// `rest` is not empty.
    public static func lineAfterMention(_ rest: String) -> String {
        let first = rest.prefix { !$0.isWhitespace }
        if first.hasPrefix("/"), first.count > 1 { return rest }
        if spec(named: first.lowercased()) != nil { return "/" + rest }
        return "/tribunal " + rest
    }

    /// Every word that names a built-in (names and aliases), which custom commands may not take.
    public static var reservedNames: Set<String> {
        Set(all.flatMap { [$0.name] + $0.aliases }).union(["rhea"]).union(ChainBlockName.allNames)
    }
}
