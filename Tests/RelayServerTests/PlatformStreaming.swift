import Foundation
import MattermostAdapter
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import Synchronization

/// One version of the message that took an answer being written: the placeholder, each edit,
/// the whole answer.
struct ShownVersion: Sendable {
    /// As the platform received it, escapes and all: where a live mention would show.
    var raw: String
    /// As a reader sees it (escapes undone, invisible joiners taken out).
    var shown: String
    /// When the platform received it.
    var at: Date
    /// Whether the platform was told not to ping anyone for it (Discord's `allowed_mentions`);
    /// true where a platform has no such switch.
    var pingsOff = true
}

/// What a platform showed of one answer written as the model streamed it.
struct WrittenAnswer: Sendable {
    /// The versions of the message that took the answer, oldest first.
    var versions: [ShownVersion]
    /// Messages anyone sees that hold some of the answer: 1 when it grew in one place.
    var messages: Int
    /// Requests the platform's fake refused with 429, where it enforces the platform's limits.
    var refusals: Int

    /// What shows at the end.
    var final: String { versions.last?.shown ?? "" }
}

extension PlatformKind {
    /// The first live mention in `raw` as this platform reads it, or nil.
    /// - Slack pings through `<@U…>` and `<!channel>`-style tokens only (a literal `<` is `&lt;`).
    /// - Discord through `<@id>` (unless the `<` is escaped) and a plain `@everyone` or `@here`.
    /// - Matrix, with `m.mentions` empty, through nothing; a plain `@room` is still broken, for
    ///   clients that read the body.
    /// - Teams through an `<at>` in the text (with a mention entity, which the relay never
    ///   sends): a literal `<` is `&lt;` in its HTML, and a card's text runs are never markup.
    /// - Google Chat through `<users/…>` in a message's text (`<users/all>`: everyone); the relay
    ///   puts an invisible joiner after every `<`, and a card's HTML has `&lt;`.
    /// - Telegram and Mattermost through `@name` (`@channel`, `@all`, `@here` on Mattermost):
    ///   an `@` straight before a letter or digit. The relay puts an invisible joiner after it.
    func liveMention(in raw: String) -> String? {
        let scalars = Array(raw.unicodeScalars)
        func at(_ index: Int, _ word: String) -> Bool {
            String(String.UnicodeScalarView(scalars[index...].prefix(word.unicodeScalars.count))).lowercased() == word
        }
        for index in scalars.indices {
            let found: Bool
            switch self {
            case .slack: found = at(index, "<@") || at(index, "<!")
            case .discord:
                found = ((at(index, "<@") || at(index, "<!")) && (index == 0 || scalars[index - 1] != "\\")) || at(index, "@everyone") || at(index, "@here")
            case .matrix: found = at(index, "@room")
            case .teams: found = at(index, "<at")
            case .googleChat: found = at(index, "<users/")
            // IRC has no mention markup: a client highlights its own nick as a word (the relay
            // breaks the channel members' nicks: IRCText.withoutHighlights).
            case .irc: found = false
            // XMPP's bodies are plain text: no markup mentions anyone (a client highlights its
            // own nick as a word).
            case .xmpp: found = false
            case .telegram, .mattermost:
                found =
                    scalars[index] == "@" && index + 1 < scalars.count
                    && (scalars[index + 1].properties.isAlphabetic || ("0"..."9").contains(scalars[index + 1]))
            }
            if found { return String(String.UnicodeScalarView(scalars[index...].prefix(12))) }
        }
        return nil
    }
}

/// Runs `body` with a fresh relay serving `kind` whose backend is a council of one model at
/// `modelURL` (a fake OpenAI-compatible server that streams).
func withStreamingPlatform<T: Sendable>(
    _ kind: PlatformKind, modelURL: String, _ body: @escaping @Sendable (any PlatformUnderTest) async throws -> T
) async throws -> T {
    let council = AppConfiguration.Backend.council(
        CouncilConfiguration(models: [CouncilModel(name: "writer", baseURL: modelURL, model: "m", tier: .cheap)], deadline: .seconds(60)))
    return try await withPlatform(kind, backend: council, body)
}

// MARK: Each platform

extension SlackUnderTest {
    /// A mention in a channel of its own: the placeholder posted with `chat.postMessage`, the
    /// answer written into it with `chat.update` (a slash command's answer is not streamed).
    func watch(_ line: String, marker: String) async throws -> WrittenAnswer {
        let channel = "C0W" + Self.letters()
        let event = SlackFakes.mention(
            String(line.dropFirst()), eventID: "Ev0W\(channel)", channel: channel, ts: "1700000300.\(Int.random(in: 100_000...999_999))")
        _ = try await relay.event(event)
        try await relay.settled()
        let requests = (relay.slack.requests(path: "chat.postMessage") + relay.slack.requests(path: "chat.update"))
            .filter { $0["channel"]?.stringValue == channel }.sorted { $0.receivedAt < $1.receivedAt }
        let versions = requests.map { request in
            let raw = (request.body?.shownTexts ?? []).joined(separator: "\n")
            return ShownVersion(raw: raw, shown: Self.unescape(raw), at: request.receivedAt)
        }
        let holding = relay.slack.messages(channel: channel).filter { message in
            message.ephemeralUser == nil && Self.unescape(([message.text] + (message.blocks?.shownTexts ?? [])).joined()).contains(marker)
        }
        return WrittenAnswer(versions: versions, messages: holding.count, refusals: 0)
    }

    static func letters() -> String { String((0..<8).map { _ in "ABCDEFGHJKLMNPQRSTUVWXYZ".randomElement()! }) }
}

extension DiscordUnderTest {
    /// An application command: deferred, then the interaction's `@original` edited as the
    /// answer grows (the fake enforces Discord's buckets and global limit).
    func watch(_ line: String, marker: String) async throws -> WrittenAnswer {
        let (name, options) = Self.interaction(line, private: false)
        let token = "token-watch-\(UUID().uuidString)"
        let id = String(1_300_000_000_000_090_000 + Int.random(in: 0..<9_999))
        _ = try await relay.interact(FakeDiscordInteractions.command(name, options: options, id: id, token: token))
        try await relay.settled()
        let edits = relay.discord.requests(FakeDiscordAPI.editOriginal).filter { $0.path.contains("/\(token)/") }
        let versions = edits.compactMap { request -> ShownVersion? in
            guard let body = request.body else { return nil }
            let raw = Self.shownTexts(body).joined(separator: "\n")
            let pingsOff = body["allowed_mentions"]?["parse"]?.arrayValue?.isEmpty == true
            return ShownVersion(raw: raw, shown: Self.unescape(raw), at: request.receivedAt, pingsOff: pingsOff)
        }
        let original = relay.discord.originals()[token].map { Self.unescape(Self.shownTexts($0.body).joined()) } ?? ""
        let others = (relay.discord.requests(FakeDiscordAPI.followup) + relay.discord.requests(FakeDiscordAPI.createMessage))
            .compactMap(\.body).filter { Self.unescape(Self.shownTexts($0).joined()).contains(marker) }
        return WrittenAnswer(
            versions: versions, messages: (original.contains(marker) ? 1 : 0) + others.count, refusals: relay.discord.refusedArrivals().count)
    }
}

extension TelegramUnderTest {
    /// A command in the group: the placeholder replying to it, edited as the answer grows (the
    /// fake enforces Telegram's flood limits).
    func watch(_ line: String, marker: String) async throws -> WrittenAnswer {
        let chat = TelegramFakes.group
        let before = Set(relay.telegram.messages(chat: chat).map(\.messageID))
        let id = Int.random(in: 100_000..<900_000)
        _ = try await relay.deliver(relay.message(line, update: id, id: id, chat: chat))
        try await relay.settled()
        let new = relay.telegram.messages(chat: chat).filter { !before.contains($0.messageID) && !$0.deleted }
        let now = (wall: Date(), monotonic: ContinuousClock.now)
        func date(_ instant: ContinuousClock.Instant) -> Date {
            now.wall.addingTimeInterval(-Double((now.monotonic - instant) / .milliseconds(1)) / 1000)
        }
        let answer = new.first { $0.text.contains(marker) } ?? new.last
        let versions = (answer.map { $0.history + [$0.current] } ?? []).map {
            ShownVersion(raw: $0.rawText, shown: TelegramStreamingTests.visible($0.text), at: date($0.at))
        }
        let refused = relay.telegram.calls().filter { $0.status == 429 }.count
        return WrittenAnswer(versions: versions, messages: new.filter { $0.text.contains(marker) }.count, refusals: refused)
    }
}

extension MatrixUnderTest {
    /// `!cmd …` in the room: a notice replying to it, replaced (`m.replace`) as the answer grows.
    func watch(_ line: String, marker: String) async throws -> WrittenAnswer {
        let command = try await relay.alice.send("!" + line.dropFirst(), in: room)
        _ = try await relay.answers(to: command, in: room)
        var messages: [String: [ShownVersion]] = [:]
        var order: [String] = []
        for event in try await relay.alice.events(in: room)
        where event["sender"]?.stringValue == relay.bot.user && event["type"]?.stringValue == "m.room.message" {
            let content = event["content"] ?? [:]
            let relation = content["m.relates_to"]
            let edited = relation?["rel_type"]?.stringValue == "m.replace" ? relation?["event_id"]?.stringValue : nil
            let id = edited ?? event["event_id"]?.stringValue ?? ""
            guard edited != nil || relation?["m.in_reply_to"]?["event_id"]?.stringValue == command else { continue }
            let shown = edited == nil ? content : (content["m.new_content"] ?? [:])
            let raw = [shown["body"]?.stringValue, shown["formatted_body"]?.stringValue].compactMap { $0 }.joined(separator: "\n")
            let mentions = shown["m.mentions"]
            let pingsOff = mentions?["room"]?.boolValue != true && (mentions?["user_ids"]?.arrayValue ?? []).isEmpty
            let at = Date(timeIntervalSince1970: Double(event["origin_server_ts"]?.intValue ?? 0) / 1000)
            if messages[id] == nil { order.append(id) }
            messages[id, default: []].append(
                ShownVersion(raw: raw, shown: MatrixShownMessage.shown(shown["body"]?.stringValue ?? ""), at: at, pingsOff: pingsOff))
        }
        let holding = order.filter { messages[$0]?.last?.shown.contains(marker) == true }
        let answer = holding.first ?? order.last
        return WrittenAnswer(versions: answer.flatMap { messages[$0] } ?? [], messages: holding.count, refusals: 0)
    }
}

extension MattermostUnderTest {
    /// A slash command: the bot's placeholder post, patched (`PUT /posts/{id}`) as the answer grows.
    func watch(_ line: String, marker: String) async throws -> WrittenAnswer {
        let (command, text) = SlackUnderTest.split(line)
        let channel = "chw" + String(UUID().uuidString.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(23))
        relay.mattermost.addChannel(channel)
        _ = try await relay.slashCommand(command, text: text, channel: channel, responseURL: relay.mattermost.makeResponseURL(channel: channel))
        try await relay.settled()
        // As sent: the harness's `botPosts` undoes the escapes.
        let posts = relay.mattermost.posts(channel: channel).filter { $0.via != "user" }
        let answer = posts.first { MattermostMarkdown.unescape($0.message).contains(marker) } ?? posts.last
        // The fake keeps each version's text; the times are the calls' that made them.
        let calls = (relay.mattermost.requests("POST /posts") + relay.mattermost.requests("PUT /posts/{id}/patch"))
            .filter { $0["channel_id"]?.stringValue == channel || $0.path.contains("/\(answer?.id ?? "-")/") }
            .sorted { $0.receivedAt < $1.receivedAt }
        let versions = (answer?.history ?? []).enumerated().map { index, raw in
            ShownVersion(raw: raw, shown: MattermostMarkdown.unescape(raw), at: index < calls.count ? calls[index].receivedAt : Date())
        }
        return WrittenAnswer(versions: versions, messages: posts.filter { MattermostMarkdown.unescape($0.message).contains(marker) }.count, refusals: 0)
    }
}
