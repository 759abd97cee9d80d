public import RelayCore

import struct Foundation.Data
import class Foundation.JSONEncoder

/// The command menu the relay registers with Telegram (`setMyCommands`), built from the same
/// `CommandTable` that `/help` reads: every built-in by its name, in the table's order, described
/// by its summary.
///
/// Aliases (`/grammar`, `/ask`, `/factcheck`) still work when typed but are not listed, as `/help`
/// lists them only beside their command; a team's custom commands are not listed either, since
/// the menu is the bot's, the same in every chat.
///
/// One payload, without `language_code`: the table's summaries exist only in English. Telegram
/// shows a payload without a language to every user whose language has no list of its own, so
/// when the table gains translations, each becomes one more payload with its `language_code`.
/// `bots/telegram/commands.json` is `fileContents()`, checked by a test.
public enum TelegramCommands {
    /// The `setMyCommands` bodies, the one for every language first.
    public static func payloads() -> [JSONValue] {
        [["commands": .array(commands().map { ["command": .string($0.name), "description": .string($0.description)] })]]
    }

    /// The first payload (every language's) as the checked-in file holds it: pretty-printed, keys
    /// sorted, slashes unescaped, a final newline — the body as is for
    /// `curl -H 'Content-Type: application/json' -d @bots/telegram/commands.json …/setMyCommands`.
    public static func fileContents() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(payloads()[0])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// The table's built-ins whose name Telegram takes, at most `TelegramLimits.commands`.
    static func commands() -> [(name: String, description: String)] {
        let valid = CommandTable.all.filter { isValidName($0.name) }
        return valid.prefix(TelegramLimits.commands).map { ($0.name, description(of: $0)) }
    }

    /// 1–32 of lowercase `a-z`, `0-9` and `_`: what Telegram accepts as a command name.
    static func isValidName(_ name: String) -> Bool {
        (1...TelegramLimits.commandName).contains(name.utf8.count)
            && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
    }

    /// A description within Telegram's 1–256 (counted in UTF-16 units, never fewer than the
    /// characters Telegram counts): cut with "…" at a word when longer, the name when empty.
    static func description(of spec: CommandSpec) -> String {
        spec.summary.isEmpty ? spec.name : TelegramHTML.truncate(spec.summary, limit: TelegramLimits.commandDescription)
    }
}
