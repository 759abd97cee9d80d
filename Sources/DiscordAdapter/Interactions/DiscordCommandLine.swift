import RelayCore

/// Turns an invoked application command into the command line the relay parses
/// (`CommandParser`), as if it had been typed: `/translate lang:fr text:Good morning` →
/// `/translate fr Good morning`, `private:true` → `--private`.
///
/// Options go first (`--tier`, `--private`, `--k`), then the arguments and the text. When the
/// text holds a word starting with `--`, a `--` before it ends option scanning, so text typed
/// into a text box is never read as an option. A language code that is also an English word
/// (`it`, `no`) is written `to it`, and `/rewrite` without a style gets `clearer` when the
/// text starts with a style's name, so the parser reads the arguments as chosen.
extension DiscordCommandInvocation {
    /// The command line; nil for a command the relay does not know.
    public var commandLine: String? {
        if type == 3 { return messageCommandLine }
        guard type == 1 else { return nil }
        if name == DiscordCommands.catchAll {
            guard let line = value("line")?.string?.trimmed, !line.isEmpty else { return "/help" }
            return line.hasPrefix("/") ? line : "/" + line
        }
        // Registered names are the table's own; an alias (`grammar`) is not registered.
        guard let command = BuiltinCommand(named: name), command.name == name else { return nil }
        switch command {
        case .translate:
            var arguments: [String] = []
            if let code = value("lang")?.string?.trimmed, !code.isEmpty {
                arguments = Language.ambiguousCodes.contains(code.lowercased()) ? ["to", code] : [code]
            }
            return line("translate", arguments: arguments, text: value("text")?.string)
        case .fix, .summarize, .explain:
            return line(name, text: value("text")?.string)
        case .ai:
            return line("ai", text: value("prompt")?.string)
        case .rewrite(nil):
            let text = value("text")?.string
            var style = value("style")?.string?.trimmed ?? ""
            if style.isEmpty, let first = text?.split(whereSeparator: \.isWhitespace).first {
                let word = first.lowercased().hasSuffix(":") ? String(first.lowercased().dropLast()) : first.lowercased()
                if RewriteStyle(rawValue: word) != nil || word == "clearer" { style = "clearer" }
            }
            return line("rewrite", arguments: style.isEmpty ? [] : [style], text: text)
        case .tribunal:
            return line("tribunal", text: value("claim")?.string, k: value("k")?.integer)
        case .run:
            return line("run", arguments: [value("name")?.string?.trimmed ?? ""], text: value("text")?.string)
        case .chain:
            return chainLine
        case .command:
            return commandAdminLine
        case .settings:
            let words = [value("scope")?.string == "channel" ? "channel" : nil, value("key")?.string, value("value")?.string]
            return (["/settings"] + words.compactMap { $0?.trimmed }.filter { !$0.isEmpty }).joined(separator: " ")
        case .history:
            if value("clear")?.boolean == true { return "/history clear" }
            if let page = value("last")?.integer { return "/history last \(page)" }
            return "/history"
        case .help:
            let topic = value("command")?.string?.trimmed ?? ""
            return topic.isEmpty ? "/help" : "/help " + topic
        default:
            return nil
        }
    }

    /// "Fact-check" runs a tribunal on the message's text; "Summarize thread" summarises the
    /// thread the command was used in; "Transcribe" transcribes the message's voice message.
    private var messageCommandLine: String? {
        switch name {
        case DiscordCommands.factCheck:
            return Self.assemble("tribunal", options: [], arguments: [], text: targetMessage?.content)
        case DiscordCommands.summarizeThread:
            return "/summarize"
        case DiscordCommands.transcribe:
            return "/transcribe"
        default:
            return nil
        }
    }

    private var chainLine: String? {
        let name = value("name")?.string?.trimmed ?? ""
        switch subcommand {
        case "save": return "/chain save \(name) = \(value("dsl")?.string?.trimmed ?? "")"
        case "run": return line("chain run", arguments: [name], text: value("text")?.string)
        case "list": return "/chain list"
        case "show", "delete": return "/chain \(subcommand!) \(name)"
        case "export": return name.isEmpty ? "/chain export" : "/chain export \(name)"
        case "import": return "/chain import " + (value("chains")?.string?.trimmed ?? "")
        default: return "/chain"
        }
    }

    private var commandAdminLine: String? {
        let name = value("name")?.string?.trimmed ?? ""
        switch subcommand {
        case "add": return "/command add \(name) \(value("template")?.string?.trimmed ?? "")"
        case "list": return "/command list"
        case "remove": return "/command remove \(name)"
        default: return "/command"
        }
    }

    /// `/command [--tier T] [--private] [--k N] [--] ARGUMENTS TEXT`.
    private func line(_ command: String, arguments: [String] = [], text: String?, k: Int? = nil) -> String {
        var options: [String] = []
        if let tier = value("tier")?.string.flatMap({ Tier(rawValue: $0.lowercased()) }) { options.append("--tier \(tier.rawValue)") }
        if value("private")?.boolean == true { options.append("--private") }
        if let k { options.append("--k \(k)") }
        return Self.assemble(command, options: options, arguments: arguments, text: text)
    }

    private static func assemble(_ command: String, options: [String], arguments: [String], text: String?) -> String {
        let text = text?.trimmed ?? ""
        let rest = (arguments.filter { !$0.isEmpty } + (text.isEmpty ? [] : [text])).joined(separator: " ")
        // A word of the text that looks like an option must stay text.
        let guarded = rest.split(whereSeparator: \.isWhitespace).contains { $0.hasPrefix("--") }
        return (["/" + command] + options + (guarded ? ["--"] : []) + (rest.isEmpty ? [] : [rest])).joined(separator: " ")
    }
}

extension String {
    fileprivate var trimmed: String {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map { index(after: $0) } ?? start
        return String(self[start..<end])
    }
}
