import Foundation

extension Chain {
    /// The canonical DSL: blocks joined by ` > `. Parsing it gives this chain back.
    public var dsl: String {
        blocks.map(\.dsl).joined(separator: " > ")
    }
}

extension Block {
    /// The block as the DSL writes it.
    public var dsl: String {
        switch self {
        case .input(let thread): thread ? "input:thread" : "input"
        case .model(let tier, let prompt):
            "model" + (tier.map { ":\($0.rawValue)" } ?? "") + (prompt.map { " \"\(Self.escape($0))\"" } ?? "")
        case .action(let action):
            switch action {
            case .translate(let language): "translate" + (language.map { ":\($0.code)" } ?? "")
            case .rewrite(let style): "rewrite" + (style.map { ":\($0.rawValue)" } ?? "")
            case .summarize: "summarize"
            case .extract: "extract"
            case .grammar: "grammar"
            case .explain: "explain"
            }
        case .custom(let name): name
        case .verify(let threshold, let escalate): "verify:\(threshold)" + (escalate ? " escalate" : "")
        case .loop(let times): "loop:\(times)"
        case .output(let isPrivate): isPrivate ? "output:private" : "output"
        }
    }

    /// The block as progress and a result's notes name it: the DSL without a model block's
    /// prompt. A chain's prompts are the team's own work and may say more than its result does;
    /// they never reach the channel, and a private result posted later carries none.
    public var label: String {
        if case .model(let tier, _) = self { return "model" + (tier.map { ":\($0.rawValue)" } ?? "") }
        return dsl
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
