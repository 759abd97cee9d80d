public import RelayCore

import struct Foundation.Data
import class Foundation.JSONEncoder

/// The custom slash commands the relay registers in a Mattermost team, built from the same
/// `CommandTable` that `/help` reads.
///
/// Mattermost makes one command (and one token) per trigger, so the list is short: the catch-all
/// `/rhea <any command line>` plus the everyday commands. Not every built-in gets a trigger of its
/// own: `/help` and `/settings` are Mattermost's own commands (a custom command cannot take their
/// place), and the rest (`/formal`, `/history`, `/ledger`…) are one `/rhea …` away, as aliases are.
/// `bots/mattermost/commands.json` is `fileContents()`, checked by a test.
public enum MattermostCommands {
    /// The triggers, in the order they are registered; `rhea` first.
    public static let triggers = ["rhea", "translate", "fix", "rewrite", "summarize", "explain", "ai", "tribunal", "chain", "run"]

    /// The `POST /api/v4/commands` body for each trigger, in `team`, pointing at `url`.
    public static func bodies(team: String, url: String) -> [JSONValue] {
        triggers.map { trigger in
            let spec = CommandTable.spec(named: trigger)
            let description = spec?.summary ?? "Any Rhea Relay command: /rhea help lists them"
            let hint = spec.map { String($0.usage.drop { $0 != " " }.drop { $0 == " " }) } ?? "help | translate fr text | tribunal claim | …"
            return [
                "team_id": .string(team), "trigger": .string(trigger), "method": "P", "url": .string(url),
                "display_name": .string(trigger == "rhea" ? "Rhea Relay" : "Rhea · \(trigger)"),
                "description": .string(String(description.prefix(128))), "auto_complete": true,
                "auto_complete_desc": .string(String(description.prefix(128))), "auto_complete_hint": .string(String(hint.prefix(128))),
                "username": "rhea",
            ]
        }
    }

    /// The list as `bots/mattermost/commands.json` holds it: the bodies for team `TEAM_ID` and
    /// `https://relay.example.com/mattermost/commands`, pretty-printed, keys sorted, a final newline.
    public static func fileContents() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let bodies = JSONValue.array(bodies(team: "TEAM_ID", url: exampleURL + MattermostPlatform.commandsPath))
        let data = (try? encoder.encode(bodies)) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// The relay's public URL the checked-in file uses.
    public static let exampleURL = "https://relay.example.com"
}
