import Foundation

/// One IRC connection's protocol state, from the first line to the last: registration (CAP,
/// SASL PLAIN or PASS, NICK and USER, a fallback nick), joining the channels, PING, and who is in
/// each channel. Pure: each line the server sends goes in (`receive`), and what to do comes out
/// — lines to send, messages for the relay — so a transcript tests it without a socket.
struct IRCSessionState: Sendable {
    enum Phase: Sendable, Hashable {
        /// `CAP LS 302` sent: waiting for the list (or a server without CAP saying so).
        case capabilities
        /// `AUTHENTICATE` in progress.
        case authenticating
        /// NICK and USER sent, waiting for 001.
        case registering
        /// Welcomed: joined or joining the channels.
        case registered
    }

    /// What the connection does after a line.
    enum Action: Sendable, Hashable {
        case send(IRCMessage)
        /// A PRIVMSG or NOTICE from someone, for `IRCInbound`.
        case message(IRCMessage)
        /// A PONG with a token the relay sent (a delivery's confirmation).
        case pong(String)
        /// Welcomed as `nick`.
        case welcomed(nick: String)
        /// The server refused the password (SASL or PASS): stop, say so.
        case refusedCredentials(String)
        /// The server is closing the connection (ERROR), or registration cannot go on.
        case close(String)
    }

    let configuredNick: String
    let password: String?
    let channels: [String]
    let realName: String

    private(set) var phase = Phase.capabilities
    /// The nick the server knows the relay by.
    private(set) var nick: String
    private var offeredCapabilities: Set<String> = []
    private var nickAttempt = 0
    private var saslSent = false
    /// Members of each joined channel, by folded nick → nick as written.
    private(set) var members: [String: [String: String]] = [:]
    /// `PREFIX` from 005: the status prefixes (`@`, `+`…) NAMES puts before nicks.
    private var statusPrefixes: Set<Character> = ["@", "+", "%", "&", "~"]
    private(set) var nickLength = 9

    init(nick: String, password: String?, channels: [String], realName: String = "Rhea Relay") {
        self.configuredNick = nick
        self.nick = nick
        self.password = password
        self.channels = channels
        self.realName = realName
    }

    /// The first lines: ask for capabilities and wait for them before NICK and USER, so a
    /// password goes the way the server takes it (SASL where offered, else PASS, which must come
    /// before NICK).
    func opening() -> [IRCMessage] { [IRCMessage("CAP", ["LS", "302"])] }

    var isRegistered: Bool { phase == .registered }

    mutating func receive(_ message: IRCMessage) -> [Action] {
        switch message.command {
        case "PING":
            return [.send(IRCMessage("PONG", message.parameters.isEmpty ? [""] : [message.parameters[message.parameters.count - 1]]))]
        case "PONG":
            return message.parameters.last.map { [.pong($0)] } ?? []
        case "ERROR":
            return [.close("the server closed the connection: \(message.parameters.last ?? "")")]
        case "CAP":
            return capability(message)
        case "AUTHENTICATE":
            return authenticate(message)
        case "421", "451":
            // No CAP here (421 unknown command; some servers answer 451 before registration).
            return phase == .capabilities ? register() : []
        case "900", "901":
            return []
        case "903":
            return [.send(IRCMessage("CAP", ["END"]))]
        case "902", "904", "905", "906", "908":
            return [.refusedCredentials("SASL authentication failed (\(message.command): \(message.parameters.last ?? ""))")]
        case "464":
            return [.refusedCredentials("the server refused the password (464: \(message.parameters.last ?? ""))")]
        case "465":
            return [.close("the server bans this connection (465: \(message.parameters.last ?? ""))")]
        case "432", "433", "436":
            return phase == .registered ? [] : nextNick()
        case "001":
            phase = .registered
            if let given = message.parameters.first, !given.isEmpty { nick = given }
            return [.welcomed(nick: nick)] + joins().map(Action.send)
        case "005":
            supported(message.parameters)
            return []
        case "353":
            // RPL_NAMREPLY: me, symbol, channel, names.
            guard message.parameters.count >= 4 else { return [] }
            let channel = IRCText.fold(message.parameters[2])
            for word in message.parameters[3].split(separator: " ") {
                let name = String(word.drop { statusPrefixes.contains($0) }.prefix { $0 != "!" })
                if !name.isEmpty { members[channel, default: [:]][IRCText.fold(name)] = name }
            }
            return []
        case "JOIN":
            guard let who = message.nick, let channel = message.parameters.first else { return [] }
            members[IRCText.fold(channel), default: [:]][IRCText.fold(who)] = who
            return []
        case "PART":
            guard let who = message.nick, let channel = message.parameters.first else { return [] }
            if IRCText.fold(who) == IRCText.fold(nick) {
                members[IRCText.fold(channel)] = nil
            } else {
                members[IRCText.fold(channel)]?[IRCText.fold(who)] = nil
            }
            return []
        case "KICK":
            guard message.parameters.count >= 2 else { return [] }
            let channel = IRCText.fold(message.parameters[0])
            if IRCText.fold(message.parameters[1]) == IRCText.fold(nick) {
                members[channel] = nil
                // Kicked: back in, once; a ban keeps it out (474, logged).
                return [.send(IRCMessage("JOIN", [message.parameters[0]]))]
            }
            members[channel]?[IRCText.fold(message.parameters[1])] = nil
            return []
        case "QUIT":
            guard let who = message.nick else { return [] }
            for channel in members.keys { members[channel]?[IRCText.fold(who)] = nil }
            return []
        case "NICK":
            guard let who = message.nick, let new = message.parameters.first else { return [] }
            if IRCText.fold(who) == IRCText.fold(nick) { nick = new }
            for channel in members.keys where members[channel]?[IRCText.fold(who)] != nil {
                members[channel]?[IRCText.fold(who)] = nil
                members[channel]?[IRCText.fold(new)] = new
            }
            return []
        case "PRIVMSG", "NOTICE":
            return phase == .registered ? [.message(message)] : []
        default:
            return []
        }
    }

    /// The channel's members as written, the relay's own nick aside.
    func members(of channel: String) -> Set<String> {
        let own = IRCText.fold(nick)
        return Set((members[IRCText.fold(channel)] ?? [:]).filter { $0.key != own }.values)
    }

    // MARK: Registration

    private mutating func capability(_ message: IRCMessage) -> [Action] {
        // CAP <target> <subcommand> [*] :<capabilities>
        guard message.parameters.count >= 3 else { return [] }
        let subcommand = message.parameters[1].uppercased()
        let more = message.parameters.count >= 4 && message.parameters[2] == "*"
        switch subcommand {
        case "LS" where phase == .capabilities:
            for word in (message.parameters.last ?? "").split(separator: " ") {
                offeredCapabilities.insert(String(word.prefix { $0 != "=" }).lowercased())
            }
            if more { return [] }
            if password != nil && offeredCapabilities.contains("sasl") {
                phase = .authenticating
                return [.send(IRCMessage("CAP", ["REQ", "sasl"]))] + registration(withPass: false)
            }
            return register()
        case "ACK" where phase == .authenticating:
            guard (message.parameters.last ?? "").split(separator: " ").contains(where: { $0.lowercased() == "sasl" }) else { return [] }
            saslSent = true
            return [.send(IRCMessage("AUTHENTICATE", ["PLAIN"]))]
        case "NAK" where phase == .authenticating:
            return [.refusedCredentials("the server offered SASL, then refused it (CAP NAK)")]
        default:
            return []
        }
    }

    private func authenticate(_ message: IRCMessage) -> [Action] {
        guard saslSent, message.parameters.first == "+", let password else { return [] }
        // PLAIN (RFC 4616): authorization id (empty), account, password; in pieces of 400.
        let encoded = Data(("\0" + configuredNick + "\0" + password).utf8).base64EncodedString()
        var pieces: [String] = []
        var rest = Substring(encoded)
        while !rest.isEmpty {
            pieces.append(String(rest.prefix(400)))
            rest = rest.dropFirst(400)
        }
        if encoded.count % 400 == 0 { pieces.append("+") }
        return pieces.map { .send(IRCMessage("AUTHENTICATE", [$0])) }
    }

    /// Registration without SASL: PASS (when there is a password), NICK, USER, and the end of
    /// capability negotiation.
    private mutating func register() -> [Action] {
        guard phase == .capabilities else { return [] }
        return registration(withPass: password != nil) + [.send(IRCMessage("CAP", ["END"]))]
    }

    private mutating func registration(withPass: Bool) -> [Action] {
        if phase == .capabilities { phase = .registering }
        var lines: [IRCMessage] = []
        if withPass, let password { lines.append(IRCMessage("PASS", [password])) }
        lines.append(IRCMessage("NICK", [nick]))
        lines.append(IRCMessage("USER", ["rhea", "0", "*", realName]))
        return lines.map(Action.send)
    }

    /// The nick was taken or refused before registration: the next of a few fallbacks
    /// (`Rhea_`, `Rhea__`, `Rhea1` … `Rhea9`, within the nick length), then give up.
    private mutating func nextNick() -> [Action] {
        let fallbacks = Self.fallbacks(for: configuredNick, length: nickLength)
        guard nickAttempt < fallbacks.count else {
            return [.close("every nick tried is taken (\(configuredNick) and \(fallbacks.count) fallbacks)")]
        }
        nick = fallbacks[nickAttempt]
        nickAttempt += 1
        return [.send(IRCMessage("NICK", [nick]))]
    }

    static func fallbacks(for nick: String, length: Int) -> [String] {
        let limit = max(length, nick.count)
        var candidates: [String] = []
        for suffix in ["_", "__"] + (1...9).map(String.init) {
            let candidate = String(nick.prefix(limit - suffix.count)) + suffix
            if candidate != nick && !candidates.contains(candidate) { candidates.append(candidate) }
        }
        return candidates
    }

    /// JOIN lines for the channels, several a line within the line's length.
    func joins() -> [IRCMessage] {
        var lines: [IRCMessage] = []
        var batch: [String] = []
        for channel in channels {
            if !batch.isEmpty && (batch + [channel]).joined(separator: ",").utf8.count > 400 {
                lines.append(IRCMessage("JOIN", [batch.joined(separator: ",")]))
                batch = []
            }
            batch.append(channel)
        }
        if !batch.isEmpty { lines.append(IRCMessage("JOIN", [batch.joined(separator: ",")])) }
        return lines
    }

    private mutating func supported(_ parameters: [String]) {
        for token in parameters.dropFirst() {
            let parts = token.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "NICKLEN": nickLength = Int(parts[1]) ?? nickLength
            case "PREFIX":
                // (ov)@+
                if let close = parts[1].firstIndex(of: ")") { statusPrefixes = Set(parts[1][parts[1].index(after: close)...]) }
            default: break
            }
        }
    }
}
