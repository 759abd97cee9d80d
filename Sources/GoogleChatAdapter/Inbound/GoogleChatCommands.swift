import Foundation
import RelayCore

/// The slash commands a Google Chat app declares in its configuration (Google Cloud console →
/// Google Chat API → Configuration → Commands): each an id (1–1000) and a name. An event names
/// only the id, so the ids here are the configuration's and never change: a new command is
/// appended with the next id. `bots/google-chat/commands.md` is `fileContents()`, checked by a
/// test, for the admin to enter.
public enum GoogleChatCommands {
    /// Id 1 is the first.
    static let names = [
        "translate", "fix", "rewrite", "formal", "casual", "shorter", "longer", "friendly", "professional", "summarize", "explain", "extract", "ai",
        "tribunal", "transcribe", "chain", "run", "command", "settings", "history", "ledger", "council", "help",
    ]

    /// The command name of id `id`, nil for one the relay did not declare.
    public static func name(id: String) -> String? {
        guard let number = Int(id), (1...names.count).contains(number) else { return nil }
        return names[number - 1]
    }

    /// The table the admin enters, in Markdown.
    public static func fileContents() -> String {
        var lines = [
            "# Google Chat slash commands",
            "",
            "Enter these in the Google Cloud console (Google Chat API → Configuration → Commands → Add a command,",
            "type *Slash command*). An event names a command only by its id, so each id must be exactly the one below.",
            "Written from the relay's command table by `rhea-relay register google-chat --out bots/google-chat/commands.md`; a test keeps it equal.",
            "",
            "| Command ID | Name | Description |",
            "|---|---|---|",
        ]
        for (index, name) in names.enumerated() {
            let summary = CommandTable.spec(named: name)?.summary ?? name
            lines.append("| \(index + 1) | /\(name) | \(summary.replacingOccurrences(of: "|", with: "\\|")) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
