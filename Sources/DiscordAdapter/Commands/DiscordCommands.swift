public import RelayCore

import struct Foundation.Data
import class Foundation.JSONEncoder

/// The application commands the relay registers with Discord (`PUT …/commands`, a bulk
/// overwrite), built from the same `CommandTable` that `/help` reads.
///
/// Slash commands for the built-ins, each with its text as string options, choices where the
/// table has a closed set (language, tier, style), and a boolean `private`; `/chain` and
/// `/command` as subcommands; the catch-all `/rhea` that takes any command line; and the two
/// message context-menu commands "Fact-check", "Summarize thread" and "Transcribe". `bots/discord/commands.json`
/// is `fileContents()`, checked by a test.
public enum DiscordCommands {
    /// The built-ins registered as slash commands, in this order (their names in `CommandTable`).
    /// The rewrite shortcuts (`/formal`…) are `/rewrite style:`; `/extract` is `/rhea extract`.
    public static let builtins = [
        "translate", "fix", "rewrite", "summarize", "explain", "ai", "tribunal", "run", "chain", "command", "settings", "history", "help",
    ]
    /// The catch-all command.
    public static let catchAll = "rhea"
    /// The message command that runs a tribunal on the message.
    public static let factCheck = "Fact-check"
    /// The message command that summarises the thread the message is in.
    public static let summarizeThread = "Summarize thread"
    /// The message command that transcribes the voice message it is used on.
    public static let transcribe = "Transcribe"

    /// The 25 languages offered as `/translate lang:` choices (Discord allows 25); any other
    /// goes through `/rhea translate CODE TEXT`.
    public static let languageCodes = [
        "en", "fr", "de", "es", "it", "pt", "pt-br", "nl", "pl", "ru", "uk", "tr", "ar", "he", "hi", "ja", "ko", "zh", "zh-tw", "sv",
        "da", "no", "fi", "cs", "vi",
    ]

    /// Discord's command types.
    enum CommandType {
        static let chatInput = 1
        static let message = 3
    }

    /// Discord's option types.
    enum OptionType {
        static let subcommand = 1
        static let string = 3
        static let integer = 4
        static let boolean = 5
    }

    /// The bulk-overwrite body: a JSON array of commands.
    public static func payload() -> JSONValue {
        var commands = builtins.map { name in slashCommand(name, description: summary(of: name), options: options(of: name)) }
        commands.append(
            slashCommand(
                catchAll, description: "Run any Rhea command line, as in other chats: translate fr Good morning",
                options: [option(.string, "line", "The command line, e.g. translate fr Good morning or tribunal --k 5 CLAIM", required: true)]))
        commands.append(messageCommand(factCheck))
        commands.append(messageCommand(summarizeThread))
        commands.append(messageCommand(transcribe))
        return .array(commands)
    }

    /// `payload()` as the checked-in file holds it: pretty-printed, keys sorted, a final newline.
    public static func fileContents() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(payload())) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    // MARK: - Builders

    enum Kind {
        case string, integer, boolean, subcommand

        var type: Int {
            switch self {
            case .string: OptionType.string
            case .integer: OptionType.integer
            case .boolean: OptionType.boolean
            case .subcommand: OptionType.subcommand
            }
        }
    }

    static func slashCommand(_ name: String, description: String, options: [JSONValue]) -> JSONValue {
        var command: [String: JSONValue] = [
            "name": .string(name), "type": .int(CommandType.chatInput), "description": .string(fit(description)),
            // Servers (0) and the bot's DMs (1); installed to servers only (0).
            "contexts": [0, 1], "integration_types": [0],
        ]
        if !options.isEmpty { command["options"] = .array(options) }
        return .object(command)
    }

    static func messageCommand(_ name: String) -> JSONValue {
        ["name": .string(name), "type": .int(CommandType.message), "contexts": [0, 1], "integration_types": [0]]
    }

    static func option(
        _ kind: Kind, _ name: String, _ description: String, required: Bool = false, choices: [(String, JSONValue)] = [],
        range: ClosedRange<Int>? = nil, options: [JSONValue] = []
    ) -> JSONValue {
        var option: [String: JSONValue] = ["type": .int(kind.type), "name": .string(name), "description": .string(fit(description))]
        if required { option["required"] = true }
        if !choices.isEmpty { option["choices"] = .array(choices.map { ["name": .string(fit($0.0)), "value": $0.1] }) }
        if let range {
            option["min_value"] = .int(range.lowerBound)
            option["max_value"] = .int(range.upperBound)
        }
        if kind == .string, choices.isEmpty { option["max_length"] = .int(6000) }
        if !options.isEmpty { option["options"] = .array(options) }
        return .object(option)
    }

    static var tier: JSONValue {
        option(.string, "tier", "Model tier for this run (default: your /settings)", choices: Tier.allCases.map { ($0.rawValue, .string($0.rawValue)) })
    }

    static var privately: JSONValue {
        option(.boolean, "private", "Only you see the result")
    }

    /// The options of each registered built-in; required ones first, as Discord demands.
    static func options(of name: String) -> [JSONValue] {
        let text = { (description: String, required: Bool) in option(.string, "text", description, required: required) }
        // Registered names are the table's own; an alias (`grammar`) is not registered.
        guard let command = BuiltinCommand(named: name), command.name == name else { return [] }
        switch command {
        case .translate:
            let languages = languageCodes.compactMap(Language.lookup).map { ($0.name, JSONValue.string($0.code)) }
            return [
                text("The text to translate", true),
                option(.string, "lang", "Target language (default: your /settings, else English)", choices: languages), tier, privately,
            ]
        case .fix: return [text("The text to fix", true), tier, privately]
        case .rewrite(nil):
            let styles = [("clearer", JSONValue.string("clearer"))] + RewriteStyle.allCases.map { ($0.rawValue, JSONValue.string($0.rawValue)) }
            return [text("The text to rewrite", true), option(.string, "style", "How to rewrite it (default: clearer)", choices: styles), tier, privately]
        case .summarize: return [text("The text to summarize (default: this thread)", false), tier, privately]
        case .explain: return [text("What to explain", true), tier, privately]
        case .ai: return [option(.string, "prompt", "Your prompt", required: true), tier, privately]
        case .tribunal:
            return [
                option(.string, "claim", "The claim to check (default: this thread)"),
                option(.integer, "k", "How many models judge", range: 2...10), tier, privately,
            ]
        case .run:
            return [option(.string, "name", "The saved chain", required: true), text("Input for the chain", false), tier, privately]
        case .chain:
            let name = { (required: Bool) in option(.string, "name", "The chain's name", required: required) }
            return [
                option(
                    .subcommand, "save", "Save a chain: NAME = DSL",
                    options: [name(true), option(.string, "dsl", "The blocks, e.g. input > grammar > rewrite:professional > output", required: true)]),
                option(.subcommand, "run", "Run a saved chain", options: [name(true), text("Input for the chain", false), tier, privately]),
                option(.subcommand, "list", "List the team's chains"),
                option(.subcommand, "show", "Show a chain", options: [name(true)]),
                option(.subcommand, "delete", "Delete a chain", options: [name(true)]),
                option(.subcommand, "export", "Export one chain, or all", options: [name(false)]),
                option(
                    .subcommand, "import", "Import chains exported elsewhere",
                    options: [option(.string, "chains", "What /chain export printed: NAME = DSL lines", required: true)]),
            ]
        case .command:
            return [
                option(
                    .subcommand, "add", "Add a custom command",
                    options: [
                        option(.string, "name", "The command's name", required: true),
                        option(.string, "template", "The prompt; placeholders {input} {context} {user} {lang}", required: true),
                    ]),
                option(.subcommand, "list", "List the team's custom commands"),
                option(.subcommand, "remove", "Remove a custom command", options: [option(.string, "name", "The command's name", required: true)]),
            ]
        case .settings:
            return [
                option(
                    .string, "key", "The setting to change (leave out to show them all)",
                    choices: SettingsKey.allCases.map { ($0.rawValue, .string($0.rawValue)) }),
                option(.string, "value", "The new value, or reset"),
                option(.string, "scope", "Whose setting (default: yours)", choices: [("me", "me"), ("channel", "channel")]),
            ]
        case .history:
            return [
                option(.integer, "last", "Show your last result whole, from this page (1: its start)", range: 1...1000),
                option(.boolean, "clear", "Delete your history at once"),
            ]
        case .help: return [option(.string, "command", "A command to explain")]
        default: return []
        }
    }

    /// The table's one-line summary of `name`.
    static func summary(of name: String) -> String {
        CommandTable.spec(named: name)?.summary ?? name
    }

    /// Text cut to Discord's 100 for descriptions and choice names.
    static func fit(_ text: String) -> String {
        guard text.count > DiscordLimits.commandDescription else { return text }
        return String(text.prefix(DiscordLimits.commandDescription - 1)) + "…"
    }
}
