/// Options every command accepts.
public struct CommandOptions: Sendable, Hashable {
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
public struct Command: Sendable, Hashable {
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

public enum CommandKind: Sendable, Hashable {
    /// Translate; nil language means "from settings, else English".
    case translate(Language?)
    /// grammar, rewrite, summarize, explain, extract, freeform.
    case action(QuickAction)
    case tribunal
    case chain(ChainSubcommand)
    case custom(name: String)
    case command(CustomCommandSubcommand)
    case settings(SettingsSubcommand)
    case history(HistorySubcommand)
    case ledger(LedgerSubcommand)
    /// What the council has learned of its judges.
    case council
    case help(topic: String?)

    /// The built-in this command is, its entry in the command table; nil for a team's custom
    /// command, which has none.
    public var builtin: BuiltinCommand? {
        switch self {
        case .translate: .translate
        case .action(let action): BuiltinCommand(action)
        case .tribunal: .tribunal
        case .chain(.run): .run
        case .chain: .chain
        case .custom: nil
        case .command: .command
        case .settings: .settings
        case .history: .history
        case .ledger: .ledger
        case .council: .council
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
    /// Whether the command may change what others in the team use, which team admins may do
    /// for anyone's things: channel settings, chains, custom commands.
    public var changesTeamSettings: Bool {
        switch self {
        case .settings(.set(.channel, _, _)): true
        case .chain(.save), .chain(.delete), .chain(.importLines): true
        case .command(.add), .command(.remove): true
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
        case .settings(.set(.channel, _, _)): true
        case .ledger: true
        default: false
        }
    }
}

public enum ChainSubcommand: Sendable, Hashable {
    case save(name: String, source: String)
    case run(name: String)
    case list
    case show(name: String)
    case delete(name: String)
    /// nil exports every chain of the team.
    case export(name: String?)
    /// One or more `NAME = DSL` lines.
    case importLines(String)
}

public enum CustomCommandSubcommand: Sendable, Hashable {
    case add(name: String, template: String)
    case list
    case remove(name: String)
}

public enum HistorySubcommand: Sendable, Hashable {
    /// The asker's last results.
    case show
    /// Deletes all of the asker's history in the team, at once.
    case clear
}

/// What `/ledger mark` says: the right verdict, or that the recorded one was right or wrong
/// (a 👍 or 👎 on the reply).
public enum LedgerMarkValue: Sendable, Hashable {
    case verdict(Verdict)
    case right
    case wrong
}

/// The team's fact-check ledger (issue 14).
public enum LedgerSubcommand: Sendable, Hashable {
    /// Entries whose claim holds every word, newest first; no words: the newest.
    case search(words: [String])
    /// One entry, judge by judge.
    case show(id: Int64)
    /// The team's whole ledger as JSON Lines.
    case export
    /// A person's word on the right verdict.
    case mark(id: Int64, as: LedgerMarkValue)
}

public enum SettingsTarget: String, Sendable, Hashable {
    case me, channel
}

public enum SettingsKey: String, Sendable, Hashable, CaseIterable {
    case lang, tier, retention
}

public enum SettingsSubcommand: Sendable, Hashable {
    case show
    /// A nil value resets the key.
    case set(SettingsTarget, SettingsKey, value: String?)
}

/// Why a command line could not be parsed: what was wrong and how to fix it.
public struct CommandError: Error, Sendable, Hashable {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }
}
