import Foundation
public import Logging
public import RelayCore
public import RelayPipeline

/// What the adapter does with each PRIVMSG the server relays: a command for the relay becomes an
/// `Event` and an `IRCAddress` in the inbox; anything else is left alone.
///
/// - In a channel: `!translate fr …` (a `!word` that is not the relay's is another bot's), or the
///   relay addressed by nick: `Rhea: translate fr …`, `Rhea, …` (a built-in with or without `!`
///   or `/` runs; other words are fact-checked; the nick alone shows the help).
/// - In a private message: anything — `translate fr …`, `!translate …` (`/translate` an IRC
///   client keeps for itself); other words are fact-checked.
/// - CTCP: VERSION is answered (by NOTICE, as CTCP wants); every other CTCP (ACTION, PING, DCC…)
///   is ignored. NOTICEs are never answered (RFC 2812 §3.3.2: that is how bots avoid loops).
///
/// IRC has no message ids: each line is one event, and the server relays it once.
public struct IRCInbound: Sendable {
    let inbox: any RelayInbox
    let logger: Logger

    public init(inbox: any RelayInbox, logger: Logger) {
        self.inbox = inbox
        self.logger = logger
    }

    /// What to do with one message.
    enum Outcome: Sendable, Hashable {
        case ignore
        case run(line: String, address: IRCAddress)
        /// A CTCP VERSION: answer `nick` by NOTICE.
        case version(nick: String)
    }

    static let version = "Rhea Relay (multi-model AI for team chat)"

    /// Reads `message` (a PRIVMSG or NOTICE) for the relay known as `nick`.
    static func outcome(of message: IRCMessage, me nick: String) -> Outcome {
        guard message.command == "PRIVMSG", message.parameters.count >= 2, let sender = message.nick,
            IRCText.fold(sender) != IRCText.fold(nick)
        else { return .ignore }
        let target = message.parameters[0]
        let text = message.parameters[1]
        if text.hasPrefix("\u{01}") {
            let word = text.dropFirst().prefix { $0 != " " && $0 != "\u{01}" }.uppercased()
            return word == "VERSION" ? .version(nick: sender) : .ignore
        }
        let trimmed = IRCText.cleaned(Substring(text)).trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return .ignore }
        if IRCText.fold(target) == IRCText.fold(nick) {
            let rest = slashed(trimmed)
            guard rest != "/" else { return .ignore }
            return .run(line: CommandTable.lineAfterMention(rest), address: IRCAddress(channel: nil, nick: sender))
        }
        let address = IRCAddress(channel: target, nick: sender)
        if trimmed.hasPrefix(BangCommands.prefix) {
            return BangCommands.line(String(trimmed.dropFirst())).map { .run(line: $0, address: address) } ?? .ignore
        }
        guard let rest = words(addressedTo: nick, in: trimmed).map(slashed) else { return .ignore }
        guard !rest.isEmpty, rest != "/" else { return .run(line: "/help", address: address) }
        return .run(line: CommandTable.lineAfterMention(rest), address: address)
    }

    /// `!word …` as `/word …`, so a typo of a command is answered as one (`lineAfterMention`).
    static func slashed(_ text: String) -> String {
        text.hasPrefix(BangCommands.prefix) ? "/" + text.dropFirst() : text
    }

    /// What follows `Nick:` or `Nick,` at the start of `text`; nil when it does not start so.
    static func words(addressedTo nick: String, in text: String) -> String? {
        let name = text.prefix { IRCText.isNickCharacter($0) }
        guard !name.isEmpty, IRCText.fold(name) == IRCText.fold(nick) else { return nil }
        let after = text.dropFirst(name.count)
        guard let mark = after.first, mark == ":" || mark == "," else { return nil }
        return after.dropFirst().trimmingCharacters(in: .whitespaces)
    }

    /// Hands a command to the inbox; a relay too busy to take it says so.
    func submit(line: String, address: IRCAddress) async {
        let event = Event(
            platform: IRCPlatform.name, team: address.team, channel: address.channel ?? address.nick, user: IRCText.fold(address.nick),
            userName: address.nick, text: line)
        do {
            let submission = try await inbox.submit(event, route: address.route)
            if let busy = submission.busyMessage { try? await inbox.post(.error(busy), route: address.route) }
        } catch {
            logger.error("irc: could not accept a command", metadata: ["error": "\(error)"])
            try? await inbox.post(.error("Rhea Relay could not take that command just now. Please send it again."), route: address.route)
        }
    }
}
