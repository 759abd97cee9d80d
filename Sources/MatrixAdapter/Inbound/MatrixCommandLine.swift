import Foundation
import RelayCore

/// How the bot is mentioned in one message: its ids, and what the message says it mentions.
struct MatrixMention: Sendable, Hashable {
    /// The bot's user id.
    var user: String
    var displayName: String?
    /// `m.mentions.user_ids` (spec v1.7): what clients now send for a pill.
    var mentionedUsers: [String]
    /// The HTML a client sent, where a pill is a link to `https://matrix.to/#/@bot:server`.
    var formattedBody: String?

    /// Whether the message mentions the bot: by `m.mentions`, by a pill, or by writing its
    /// name at the start (older clients).
    func matches(_ body: String) -> Bool {
        mentionedUsers.contains(user) || formattedBody?.contains("matrix.to/#/" + user) == true
            || formattedBody?.contains("matrix.to/#/" + (user.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? user)) == true
            || leadingName(in: body) != nil
    }

    /// The names a body may call the bot by, longest first.
    var names: [String] {
        ([user, displayName, MatrixID.localpart(of: user)].compactMap { $0 }.filter { !$0.isEmpty }).sorted { $0.count > $1.count }
    }

    /// The length of the bot's name (and a `:` or `,` after it) at the start of `body`.
    func leadingName(in body: String) -> Int? {
        let lowered = body.lowercased()
        for name in names {
            let candidate = name.lowercased()
            for prefix in [candidate, "@" + candidate] where lowered.hasPrefix(prefix) {
                let rest = lowered.dropFirst(prefix.count)
                guard let next = rest.first else { return prefix.count }
                if next == ":" || next == "," { return prefix.count + 1 }
                if next.isWhitespace { return prefix.count }
            }
        }
        return nil
    }
}

/// The command line a Matrix message asks the relay to run, or nil when it is not for the relay.
///
/// - `!cmd …` where `cmd` is one of the relay's commands (or `!rhea …`, the catch-all): Matrix
///   clients keep `/…` for themselves. A `!word` the relay does not know is left alone: other
///   bots in the room use `!` too.
/// - A mention of the bot (a pill, `m.mentions`, or its name first): followed by a command it
///   runs it (`Relay: translate fr hi`, with or without `!`); followed by other words it
///   fact-checks them; alone, sent as a reply, it fact-checks the replied-to message.
enum MatrixCommandLine {
    static func line(_ body: String, mention: MatrixMention, isReply: Bool) -> String? {
        let text = body.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix(BangCommands.prefix) {
            return command(String(text.dropFirst(BangCommands.prefix.count)))
        }
        guard let rest = words(afterMentionIn: text, mention: mention) else { return nil }
        if rest.isEmpty { return isReply ? "/tribunal" : nil }
        let stripped = rest.drop { $0 == "!" || $0 == "/" }
        if let line = command(String(stripped)) { return line }
        return "/tribunal " + rest
    }

    /// What `body` says besides the bot's name (trimmed; empty for the name alone), or nil when
    /// it does not mention the bot.
    static func words(afterMentionIn body: String, mention: MatrixMention) -> String? {
        let text = body.trimmingCharacters(in: .whitespacesAndNewlines)
        guard mention.matches(text) else { return nil }
        var rest = text
        if let length = mention.leadingName(in: text) {
            rest = String(text.dropFirst(length))
        } else {
            // A pill elsewhere in the text: its name is not part of what to run.
            for name in mention.names { rest = rest.replacingOccurrences(of: name, with: " ", options: .caseInsensitive) }
        }
        return rest.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `cmd rest` as the relay's `/cmd rest`, when `cmd` is a command of the relay.
    private static func command(_ text: String) -> String? { BangCommands.line(text) }
}

/// Text helpers for Matrix bodies.
enum MatrixText {
    /// `body` without the quote that clients before spec v1.13 put in front of a reply
    /// (`> <@ada:example.org> original` lines, then a blank line).
    static func withoutReplyFallback(_ body: String) -> String {
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first?.hasPrefix("> ") == true else { return body }
        let rest = lines.drop { $0.hasPrefix(">") }.drop { $0.isEmpty }
        return rest.joined(separator: "\n")
    }

    /// An emoji without variation selectors and skin tones, for comparing.
    static func bare(_ emoji: String) -> String {
        String(String.UnicodeScalarView(emoji.unicodeScalars.filter { !(0xFE00...0xFE0F).contains($0.value) && !(0x1F3FB...0x1F3FF).contains($0.value) }))
    }
}
