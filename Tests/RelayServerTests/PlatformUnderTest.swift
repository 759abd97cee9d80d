import DiscordAdapter
import Foundation
import Hummingbird
import HummingbirdTesting
import RelayConsole
import RelayCore
import RelayPipeline
import RelayServer
import RelayTestSupport
import Synchronization
import Testing

/// A chat platform the relay serves, behind its fakes — so one scenario can run unchanged on
/// each, as `BackendUnderTest` does for backends.
enum PlatformKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// Slash commands over HTTP, answered at their `response_url` (and chat.postMessage/update).
    case slack
    /// Interactions over HTTP, deferred, then answered by editing the original response.
    case discord
    /// Updates POSTed to the webhook with the secret token, in a group; answered as a reply to the
    /// command's message (progress edited into the result), private results in the asker's chat.
    case telegram
    /// `!cmd …` typed in a room on a real Synapse; answered as a notice replying to the command
    /// (progress edited into the result), private results in a direct room with the asker.
    case matrix
    /// A slash command POSTed with its token; answered by the bot through REST v4 (a chain's
    /// progress post patched into the result), private answers at the `response_url` (ephemeral).
    case mattermost
    /// A mention in a channel thread, signed as the Bot Connector signs it (RS256); answered by
    /// a placeholder in the thread updated into the result, private results in the asker's
    /// personal chat with the bot.
    case teams
    /// A mention in a space's thread, signed as Google Chat signs it (RS256); answered in the
    /// event's own answer when ready in time, else through the Chat API (progress patched into
    /// the result), private results shown to the asker alone in the thread.
    case googleChat = "google-chat"
    /// `!cmd …` said in a channel on a real ngIRCd by a person on the `irc` library; answered in
    /// lines starting with the asker's nick (no edits: no progress edited, no streaming),
    /// private results in a private message.
    case irc
    /// `!cmd …` said in a room on a real Prosody by a person on slixmpp; answered in a message
    /// starting with the asker's nick, marked as a reply, progress and streaming by correcting
    /// it (XEP-0308), private results in the room's private messages.
    case xmpp
    var testDescription: String { rawValue }

    /// The platforms that show an answer growing as the model writes it: all but IRC, which
    /// cannot edit a line (it gets the whole answer once: IRCEndToEndTests).
    static var streaming: [PlatformKind] { allCases.filter { $0 != .irc } }

    /// How commands are typed there: `!translate` where the client keeps `/…` for itself.
    var sigil: String { self == .matrix || self == .irc || self == .xmpp ? "!" : "/" }
}

/// What the asker (and the channel) saw of one command, read from the platform's fake once the
/// relay was idle again.
struct SeenReply: Sendable {
    /// The acknowledgement's HTTP status.
    var acknowledgement: Int
    /// Progress lines ("Running… 1/2 (grammar)"), in order.
    var progress: [String] = []
    /// The final replies' texts as a reader sees them (escapes undone), one per reply.
    var finals: [String] = []
    /// Notes left in the channel where a private answer went elsewhere ("Finished — the result
    /// was sent privately to the person who asked."): they hold none of the answer.
    var notices: [String] = []
    /// Whether only the asker sees the answer.
    var isPrivate = false
    /// Messages anyone in the channel sees, with the answer or progress (notices aside).
    var publicMessages = 0

    static let privateNotice = "Finished — the result was sent privately"

    /// The one final reply's text; empty when there is not exactly one.
    var text: String { finals.count == 1 ? finals[0] : "" }

    /// The agreement footer's verdict and percent ("Verdict: true · Agreement 90% · …").
    var agreement: (verdict: String?, percent: Int)? {
        guard let line = text.split(separator: "\n").first(where: { $0.contains("Agreement ") }) else { return nil }
        let parts = line.split(separator: "·").map { $0.trimmingCharacters(in: .whitespaces) }
        let verdict = parts.first { $0.hasPrefix("Verdict: ") }.map { String($0.dropFirst("Verdict: ".count)) }
        guard let percent = parts.first(where: { $0.hasPrefix("Agreement ") }).flatMap({ Int($0.dropFirst("Agreement ".count).dropLast()) })
        else { return nil }
        return (verdict, percent)
    }
}

/// A running relay with one platform on, and the fakes around it.
protocol PlatformUnderTest: Sendable {
    var kind: PlatformKind { get }
    var tribunal: FakeRheaTribunal { get }
    /// Sends `line` (`/translate fr Good morning`, `/rhea …` for the catch-all) as a person of
    /// this platform would, signed, `private` the platform's way; `delivery` names this delivery
    /// (the same name twice is one delivery sent twice, as a retry). Waits until the relay is idle,
    /// then returns what the platform's fake received for it.
    func send(_ line: String, private: Bool, delivery: String, times: Int) async throws -> SeenReply
    /// Sends `line` publicly, as `send` does, and returns every version of the message that took
    /// the answer, as the platform received them (`marker`: a word of the answer, to tell its
    /// messages from others). For answers written as the model streams them.
    func watch(_ line: String, marker: String) async throws -> WrittenAnswer
}

extension PlatformUnderTest {
    func send(_ line: String, private: Bool = false, delivery: String = UUID().uuidString, times: Int = 1) async throws -> SeenReply {
        try await send(line, private: `private`, delivery: delivery, times: times)
    }

    /// What reached the models: the fake Tribunal's requests to `path`.
    func modelRequests(_ path: String) async -> Int { await tribunal.requests(path: path).count }
}

extension PlatformKind {
    /// The asker's entry for the operator's list (`ADMIN_USERS`), of every team: the user id the
    /// platform's adapter gives the person `send` sends as. Nil for Matrix, where the asker made
    /// the room and so administers it on the platform.
    var askerEntry: String? {
        switch self {
        case .slack: "slack:*:\(SlackFakes.humanUser)"
        case .discord: "discord:*:\(FakeDiscordInteractions.asker)"
        case .telegram: "telegram:*:\(TelegramFakes.alice)"
        case .matrix: nil
        case .mattermost: "mattermost:*:\(FakeMattermost.alice)"
        case .teams: "teams:*:\(FakeBotFramework.aliceAAD)"
        case .googleChat: "google-chat:*:\(FakeGoogleChat.alice)"
        case .irc: "irc:*:\(IRCUnderTest.person)"
        case .xmpp: "xmpp:*:\(XMPPFakes.room)/ada"
        }
    }
}

/// Runs `body` with a fresh relay serving `kind` over its fakes.
/// `backend`, when given, replaces the fake Rhea Tribunal as the relay's backend. The asker
/// administers the team (the operator's list names them, `PlatformKind.askerEntry`), as whoever
/// sets a bot up does, unless `askerIsAdmin` is false. `console`: the web console on, under
/// `https://relay.example.com`.
func withPlatform<T: Sendable>(
    _ kind: PlatformKind, backend: AppConfiguration.Backend? = nil, askerIsAdmin: Bool = true, console: Bool = false,
    _ body: @escaping @Sendable (any PlatformUnderTest) async throws -> T
) async throws -> T {
    func configured(_ configuration: AppConfiguration) throws -> AppConfiguration {
        var configuration = configuration
        if let backend { configuration.backend = backend }
        if console { configuration.console = ConsoleSettings(enabled: true, publicURL: "https://relay.example.com") }
        if askerIsAdmin, let entry = kind.askerEntry {
            configuration.relay.operatorAdmins = try OperatorAdmins(parsing: entry, platforms: [kind.rawValue])
        }
        return configuration
    }
    switch kind {
    case .slack:
        return try await SlackFakes.with { fakes in
            // SlackFakes make the asker a workspace admin.
            if !askerIsAdmin { fakes.slack.seed(.member(SlackFakes.humanUser, teamID: SlackFakes.team)) }
            return try await fakes.withRelay(try configured(fakes.configuration())) { relay in try await body(SlackUnderTest(relay: relay)) }
        }
    case .discord:
        return try await DiscordFakes.with { fakes in
            try await fakes.withRelay(try configured(fakes.configuration())) { relay in try await body(DiscordUnderTest(relay: relay)) }
        }
    case .telegram:
        return try await TelegramFakes.with { fakes in
            try await fakes.withRelay(try configured(fakes.configuration())) { relay in try await body(TelegramUnderTest(relay: relay)) }
        }
    case .matrix:
        return try await MatrixFakes.with { fakes in
            try await fakes.withRelay(try configured(fakes.configuration())) { relay in
                try await body(MatrixUnderTest(relay: relay, room: try await relay.room()))
            }
        }
    case .mattermost:
        return try await MattermostFakes.with { fakes in
            try await fakes.withRelay(try configured(fakes.configuration())) { relay in try await body(MattermostUnderTest(relay: relay)) }
        }
    case .teams:
        return try await TeamsFakes.with { fakes in
            try await fakes.withRelay(try configured(fakes.configuration())) { relay in try await body(TeamsUnderTest(relay: relay)) }
        }
    case .googleChat:
        return try await GoogleChatFakes.with { fakes in
            try await fakes.withRelay(try configured(try fakes.configuration())) { relay in try await body(GoogleChatUnderTest(relay: relay)) }
        }
    case .irc:
        return try await IRCFakes.with { fakes in
            try await fakes.withRelay(try configured(fakes.configuration())) { relay in try await body(IRCUnderTest(relay: relay)) }
        }
    case .xmpp:
        return try await XMPPFakes.with { fakes in
            try await fakes.withRelay(try configured(fakes.configuration())) { relay in try await body(XMPPUnderTest(relay: relay)) }
        }
    }
}

// MARK: Slack

/// Slack: `/command text` POSTed as a signed form to `/slack/commands`, `--private` in the text;
/// answers at the command's `response_url` (a chain's progress is posted, then updated into
/// the result).
struct SlackUnderTest: PlatformUnderTest {
    let relay: RelayUnderTest
    var kind: PlatformKind { .slack }
    var tribunal: FakeRheaTribunal { relay.tribunal }

    func send(_ line: String, private: Bool, delivery: String, times: Int) async throws -> SeenReply {
        let (command, text) = Self.split(line)
        let responseURL = relay.slack.makeResponseURL()
        let channel = "C0P" + String(delivery.filter(\.isLetter).prefix(8)).uppercased()
        var status = 0
        var acks: [JSONValue] = []
        for _ in 0..<times {
            let response = try await relay.slashCommand(
                command, text: `private` ? text + " --private" : text, responseURL: responseURL, channel: channel, triggerID: "trigger-\(delivery)")
            status = Int(response.status.code)
            // An answer in the acknowledgement itself, rather than "⏳ Working on it…".
            if let ack = response.json, ack["text"]?.stringValue?.hasPrefix("⏳") == false { acks.append(ack) }
        }
        try await relay.settled()
        return Self.read(acks: acks, acknowledgement: status, responseURL: responseURL, channel: channel, relay: relay)
    }

    /// What the fake Slack received for one command (and its acknowledgements' own answers).
    static func read(acks: [JSONValue], acknowledgement: Int, responseURL: String, channel: String, relay: RelayUnderTest) -> SeenReply {
        var seen = SeenReply(acknowledgement: acknowledgement)
        for ack in acks {
            seen.finals.append(unescape(ack.shownTexts.joined(separator: "\n")))
            if ack["response_type"]?.stringValue == "in_channel" { seen.publicMessages += 1 }
        }
        let posted = (relay.slack.requests(path: "chat.postMessage") + relay.slack.requests(path: "chat.update"))
            .filter { $0["channel"]?.stringValue == channel }.compactMap(\.body)
        let answered = relay.slack.requests(responseURL: responseURL).compactMap(\.body)
        for body in posted + answered {
            let shown = unescape(body.shownTexts.joined(separator: "\n"))
            if body["text"]?.stringValue?.contains("Running…") == true {
                seen.progress.append(shown)
            } else if shown.hasPrefix(SeenReply.privateNotice) {
                seen.notices.append(shown)
            } else {
                seen.finals.append(shown)
            }
        }
        let notices = posted.filter { $0["text"]?.stringValue?.hasPrefix(SeenReply.privateNotice) == true }.count
        let ephemeral = answered.filter { $0["response_type"]?.stringValue != "in_channel" }.count
        seen.publicMessages += posted.count - notices + answered.count - ephemeral
        seen.isPrivate = !seen.finals.isEmpty && seen.publicMessages == 0
        return seen
    }

    /// `/translate fr Good morning` → (`/translate`, `fr Good morning`).
    static func split(_ line: String) -> (String, String) {
        let command = line.prefix { !$0.isWhitespace }
        return (String(command), String(line.dropFirst(command.count).drop(while: \.isWhitespace)))
    }

    /// Slack's mrkdwn escapes undone: what a reader sees.
    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }
}

// MARK: Discord

/// Discord: an application command interaction, signed with Ed25519, options as Discord sends
/// them (`private` a boolean option; a command without options here goes through the catch-all
/// `/rhea line:…`); answered by editing the deferred original response.
struct DiscordUnderTest: PlatformUnderTest {
    let relay: DiscordRelay
    var kind: PlatformKind { .discord }
    var tribunal: FakeRheaTribunal { relay.tribunal }
    private static let ids = Atomic<Int>(0)

    func send(_ line: String, private: Bool, delivery: String, times: Int) async throws -> SeenReply {
        let (name, options) = Self.interaction(line, private: `private`)
        let token = "token-\(delivery)"
        let id = String(1_300_000_000_000_010_000 + Self.ids.wrappingAdd(1, ordering: .relaxed).oldValue)
        let interaction = FakeDiscordInteractions.command(name, options: options, id: id, token: token)
        var status = 0
        var ephemeralAck = false
        var immediate: [JSONValue] = []
        for _ in 0..<times {
            let ack = try await relay.interact(interaction)
            status = Int(ack.status.code)
            let ephemeral = ((ack.json?["data"]?["flags"]?.intValue ?? 0) & 64) != 0
            // Type 4: answered in the acknowledgement itself, rather than deferred (type 5).
            if ack.json?["type"] == 4, let data = ack.json?["data"] {
                immediate.append(data)
            } else {
                ephemeralAck = ephemeral
            }
        }
        try await relay.settled()
        return Self.read(immediate: immediate, ephemeralAck: ephemeralAck, acknowledgement: status, token: token, relay: relay)
    }

    /// What the fake Discord API received for one interaction (and its acknowledgements' own answers).
    static func read(immediate: [JSONValue], ephemeralAck: Bool, acknowledgement: Int, token: String, relay: DiscordRelay) -> SeenReply {
        var seen = SeenReply(acknowledgement: acknowledgement)
        for data in immediate {
            seen.finals.append(unescape(shownTexts(data).joined(separator: "\n")))
            if ((data["flags"]?.intValue ?? 0) & 64) == 0 { seen.publicMessages += 1 }
        }
        let edits = relay.discord.requests(FakeDiscordAPI.editOriginal).filter { $0.path.contains("/\(token)/") }.compactMap(\.body)
        let followups = relay.discord.requests(FakeDiscordAPI.followup).filter { $0.path.hasSuffix("/\(token)") }.compactMap(\.body)
        let posts = relay.discord.requests(FakeDiscordAPI.createMessage).compactMap(\.body)
        for body in edits + followups + posts {
            let shown = unescape(shownTexts(body).joined(separator: "\n"))
            if body["embeds"]?.arrayValue?.isEmpty != false, body["content"]?.stringValue?.contains("Running…") == true {
                seen.progress.append(shown)
            } else if shown.hasPrefix(SeenReply.privateNotice) {
                seen.notices.append(shown)
            } else {
                seen.finals.append(shown)
            }
        }
        let notices = (edits + posts).filter { $0["content"]?.stringValue?.hasPrefix(SeenReply.privateNotice) == true }.count
        let ephemeralFollowups = followups.filter { (($0["flags"]?.intValue ?? 0) & 64) != 0 }.count
        seen.publicMessages += (ephemeralAck ? 0 : edits.count) - notices + followups.count - ephemeralFollowups + posts.count
        seen.isPrivate = !seen.finals.isEmpty && seen.publicMessages == 0
        return seen
    }

    /// The command and options Discord sends for `line`: the registered command with its
    /// options where this knows them, else the catch-all `/rhea line:…`.
    static func interaction(_ line: String, private: Bool) -> (String, [(String, JSONValue)]) {
        let (command, rest) = SlackUnderTest.split(line)
        let (first, afterFirst) = SlackUnderTest.split(rest)
        var options: [(String, JSONValue)]
        switch command {
        case "/translate": options = [("lang", .string(first)), ("text", .string(afterFirst))]
        case "/fix", "/summarize", "/explain": options = [("text", .string(rest))]
        case "/ai": options = [("prompt", .string(rest))]
        case "/tribunal": options = [("claim", .string(rest))]
        case "/run": options = [("name", .string(first)), ("text", .string(afterFirst))]
        case "/rhea": return ("rhea", [("line", .string(`private` ? rest + " --private" : rest))])
        default: return ("rhea", [("line", .string(String(line.dropFirst()) + (`private` ? " --private" : "")))])
        }
        if `private` { options.append(("private", true)) }
        return (String(command.dropFirst()), options)
    }

    /// What Discord shows of a message: content, embed titles, descriptions, fields, footers.
    static func shownTexts(_ body: JSONValue) -> [String] {
        var texts = [body["content"]?.stringValue].compactMap { $0 }
        for embed in body["embeds"]?.arrayValue ?? [] {
            texts += [embed["title"]?.stringValue, embed["description"]?.stringValue].compactMap { $0 }
            for field in embed["fields"]?.arrayValue ?? [] {
                texts += [field["name"]?.stringValue, field["value"]?.stringValue].compactMap { $0 }
            }
            texts += [embed["footer"]?["text"]?.stringValue].compactMap { $0 }
        }
        return texts.filter { !$0.isEmpty }
    }

    /// Discord's markdown escapes undone (a backslash before a character, the zero-width space
    /// after `@`): what a reader sees.
    static func unescape(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var escaped = false
        for scalar in text.unicodeScalars {
            if escaped {
                out.append(scalar)
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else if scalar == "\u{200B}", out.last == "@" {
                continue
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}
