import RelayCore

extension Relay {
    /// `/help` and `/help CMD`, generated from the command table.
    func help(_ topic: String?, customs: [CustomCommand]) -> Reply {
        guard let topic else {
            var lines = CommandTable.all.map { spec in
                let aliases = spec.aliases.isEmpty ? "" : " (also " + spec.aliases.map { "/\($0)" }.joined(separator: ", ") + ")"
                return "/\(spec.name)\(aliases) — \(spec.summary)"
            }
            if !customs.isEmpty {
                lines.append("")
                lines.append("This team's commands: " + customs.map { "/\($0.name)" }.joined(separator: ", "))
            }
            lines.append("")
            lines.append("Every command takes `--tier cheap|mid|frontier` and `--private`. `/help COMMAND` for details.")
            return .info(lines.joined(separator: "\n"), title: "Commands")
        }
        if let spec = BuiltinCommand(named: topic)?.spec {
            var lines = ["Usage: `\(spec.usage)`", spec.summary] + spec.details
            if !spec.aliases.isEmpty { lines.append("Also: " + spec.aliases.map { "`/\($0)`" }.joined(separator: ", ")) }
            if let input = spec.input {
                var from = ["typed after the command"]
                if input.reply { from.append("the message you reply to") }
                if input.thread { from.append("the thread") }
                lines.append("Input: " + from.joined(separator: ", else "))
            }
            lines.append("Examples:")
            lines += spec.examples.map { "  \($0)" }
            return .info(lines.joined(separator: "\n"), title: "/\(spec.name)")
        }
        if let custom = customs.first(where: { $0.name == topic }) {
            return .info("Custom command by \(custom.creator):\n\(custom.template)", title: "/\(custom.name)")
        }
        return .error(CommandParser.unknownCommandMessage(topic, customCommands: Set(customs.map(\.name))))
    }
}
