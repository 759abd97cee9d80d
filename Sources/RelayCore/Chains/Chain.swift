/// A saved pipeline of blocks: `input > grammar > rewrite:formal > verify:80 > output`.
public struct Chain: Sendable, Hashable {
    public var blocks: [Block]

    public init(blocks: [Block]) {
        self.blocks = blocks
    }
}

/// One step of a chain.
public enum Block: Sendable, Hashable {
    /// The command's text, or the whole thread.
    case input(thread: Bool)
    /// A free-form model pass over a prompt (default `{input}`); later blocks use its tier.
    case model(tier: Tier?, prompt: String?)
    /// One of the quick actions, with the same prompts as the commands.
    case action(ChainAction)
    /// A team's custom command, run as its template.
    case custom(name: String)
    /// Consensus gate: pass when agreement ≥ threshold % (and the verdict, if any, is affirmative).
    case verify(threshold: Int, escalate: Bool)
    /// Run the previous block `times` times in total.
    case loop(times: Int)
    /// Post the result (implied at the end).
    case output(isPrivate: Bool)

    /// Whether the block calls a model to transform the text (what `loop` and `escalate` repeat).
    public var transformsText: Bool {
        switch self {
        case .model, .action, .custom: true
        default: false
        }
    }
}

/// The quick actions a chain block can name.
public enum ChainAction: Sendable, Hashable {
    /// nil: the caller's language setting, else English.
    case translate(Language?)
    case rewrite(RewriteStyle?)
    case summarize, extract, grammar, explain
}

/// The block names the DSL knows; custom commands may not take them.
public enum ChainBlockName {
    public static let builtins = ["input", "model", "translate", "rewrite", "summarize", "extract", "grammar", "explain", "verify", "loop", "output"]
    static let allNames: Set<String> = Set(builtins)
}

/// Limits on what one chain may do (configurable).
public struct ChainLimits: Sendable, Hashable {
    public var maxBlocks: Int
    public var maxModelCalls: Int
    public var maxLoop: Int

    public init(maxBlocks: Int = 16, maxModelCalls: Int = 40, maxLoop: Int = 10) {
        self.maxBlocks = maxBlocks
        self.maxModelCalls = maxModelCalls
        self.maxLoop = maxLoop
    }
}
