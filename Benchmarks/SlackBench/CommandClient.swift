import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import RelayCore
import RelayTestSupport

/// Sends signed `/translate ja …` commands, as Slack would (slash commands, each with its own
/// `response_url` at the sink: the issue's workload), or as Discord would (the same command as
/// an application command interaction signed with Ed25519, each with its own interaction
/// token, whose `@original` the relay edits at the sink), or as Telegram would (the same command
/// typed in a private chat with the bot, as a `message` update POSTed to the webhook with its
/// secret token; the relay answers with a `sendMessage` replying to it at the fake Bot API), or
/// as Matrix would (typed in a room, read by the relay's `/sync` from a `MatrixSink`).
struct CommandClient: Sendable {
    let http: HTTPClient
    /// One URL per replica; a user's commands all go to the same one (`url(for:)`).
    let urls: [String]
    let signer: SlackSigner
    let sink: ReplySink
    /// Teams to spread commands over (`T0`, `T1`…): one by default, as one workspace's users.
    var teams = 1
    let platform: BenchPlatform
    let discordSigner: FakeDiscordSigner
    /// The homeserver commands are typed at (`--platform matrix`).
    let matrix: MatrixSink?
    /// The IRC or XMPP server commands are typed at (`--platform irc|xmpp`).
    let socket: (any SocketPeer)?
    /// With `--voice`: the voice note every Telegram command carries (its file id at the fake Bot API).
    let voiceFile: String?
    /// The Bot Connector's token on every Teams activity.
    let teamsToken: String
    /// Google Chat's token on every event.
    let googleChatToken: String

    /// `replicas` servers listen on `port`, `port + 1`…; users are spread over them.
    init(
        http: HTTPClient, port: Int, replicas: Int = 1, secret: String, sink: ReplySink, platform: BenchPlatform = .slack,
        discordSigner: FakeDiscordSigner, matrix: MatrixSink? = nil, socket: (any SocketPeer)? = nil, voiceFile: String? = nil
    ) {
        self.http = http
        let paths: [BenchPlatform: String] = [
            .slack: "/slack/commands", .discord: "/discord/interactions", .telegram: "/telegram/webhook", .mattermost: "/mattermost/commands",
            .teams: "/teams/messages", .googleChat: "/google-chat/events",
        ]
        urls = (0..<max(1, replicas)).map { "http://127.0.0.1:\(port + $0)" + paths[platform, default: "/slack/commands"] }
        // One Bot Connector token for every activity, as the Bot Connector reuses its own: signing
        // one per request would measure the client's RSA, not the relay.
        teamsToken = sink.teamsKey.rs256([
            "iss": "https://api.botframework.com", "aud": .string(ReplySink.teamsAppID), "serviceurl": .string(sink.teamsServiceURL),
            "exp": .int(Int(Date().timeIntervalSince1970) + 24 * 3600),
        ])
        googleChatToken = sink.google.eventToken()
        signer = SlackSigner(signingSecret: secret)
        self.sink = sink
        self.platform = platform
        self.discordSigner = discordSigner
        self.matrix = matrix
        self.socket = socket
        self.voiceFile = voiceFile
    }

    /// The ack's outcome: the HTTP status, or nil when the connection failed (a killed server).
    struct Ack: Sendable {
        var sent: ContinuousClock.Instant
        var acked: ContinuousClock.Instant
        var status: Int?
        var body: String
        /// The relay answered "busy, N ahead of you" in the acknowledgement: no reply follows.
        var isBusy: Bool { body.contains("ahead of you") }
    }

    /// Command `index`, from user `U<index % users>`.
    func send(_ index: Int, user: Int) async -> Ack {
        switch platform {
        case .discord: return await sendInteraction(index, user: user)
        case .telegram: return await sendUpdate(index, user: user)
        case .matrix: return typeInRoom(index, user: user)
        case .irc, .xmpp: return typeOnSocket(index, user: user)
        case .mattermost: return await sendMattermostCommand(index, user: user)
        case .teams: return await sendTeamsActivity(index, user: user)
        case .googleChat: return await sendGoogleChatEvent(index, user: user)
        case .slack: break
        }
        let body = Self.form([
            "token": "legacy", "team_id": "T\(index % teams)", "team_domain": "bench", "channel_id": "C\(user)",
            "channel_name": "bench", "user_id": "U\(user)", "user_name": "user\(user)", "command": "/translate",
            "text": "ja Good morning, this is command number \(index)", "response_url": sink.url(for: index),
            "trigger_id": "trigger.\(index)", "api_app_id": "A0BENCH",
        ])
        var request = HTTPClientRequest(url: url(for: user))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        for (name, value) in signer.headers(body: body) { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: body))
        return await execute(request)
    }

    /// Command `index` as a Discord interaction from user `user`, in that user's channel: signed
    /// over timestamp + body with the application's key, as Discord signs it.
    func sendInteraction(_ index: Int, user: Int) async -> Ack {
        let interaction = FakeDiscordInteractions.command(
            "translate", options: [("lang", "ja"), ("text", .string("Good morning, this is command number \(index)"))],
            id: String(1_300_000_000_000_000_000 + index), token: ReplySink.discordToken(for: index), user: String(1_000_000_000_000_100_000 + user),
            channel: String(1_100_000_000_000_100_000 + user))
        let body = String(decoding: interaction.encoded(), as: UTF8.self)
        let timestamp = String(Int(Date().timeIntervalSince1970))
        var request = HTTPClientRequest(url: url(for: user))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "X-Signature-Ed25519", value: discordSigner.signature(body: body, timestamp: timestamp))
        request.headers.add(name: "X-Signature-Timestamp", value: timestamp)
        request.body = .bytes(ByteBuffer(string: body))
        return await execute(request)
    }

    /// Command `index` as a Telegram `message` update from user `user` in their private chat with
    /// the bot (a private chat's id is its user's): update and message ids are the command's
    /// number + 1, so the reply (`reply_parameters.message_id`) names the command. Delivered as
    /// Telegram's webhook delivers it: JSON, with the secret token in its header.
    func sendUpdate(_ index: Int, user: Int) async -> Ack {
        let person = Self.telegramUser(user)
        let update =
            if let voiceFile {
                // The same command spoken: the caption names it, the note holds the text.
                TelegramUpdates.voiceMessage(
                    updateID: index + 1, messageID: index + 1, chat: person, from: person, voice: TelegramUpdates.voiceObject(fileID: voiceFile),
                    caption: "/translate ja")
            } else {
                TelegramUpdates.message(
                    updateID: index + 1, messageID: index + 1, chat: person, from: person, firstName: "User \(user)", username: "user\(user)",
                    text: "/translate ja Good morning, this is command number \(index)")
            }
        var request = HTTPClientRequest(url: url(for: user))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "X-Telegram-Bot-Api-Secret-Token", value: TelegramSink.webhookSecret)
        request.body = .bytes(ByteBuffer(bytes: update.encoded()))
        return await execute(request)
    }

    /// Command `index` typed by `user` in their room: it waits at the homeserver for the relay's
    /// next `/sync`, so there is no acknowledgement to wait for (the "ack" is the hand-over).
    func typeInRoom(_ index: Int, user: Int) -> Ack {
        let sent = ContinuousClock.now
        guard let matrix else { return Ack(sent: sent, acked: sent, status: nil, body: "") }
        matrix.post(index, user: user, text: "!translate ja Good morning, this is command number \(index)")
        return Ack(sent: sent, acked: .now, status: 200, body: "")
    }

    /// Command `index` said by user `user` at the in-process IRC or XMPP server: no
    /// acknowledgement comes there (the line or stanza is written, or lost with no relay connected).
    func typeOnSocket(_ index: Int, user: Int) -> Ack {
        let sent = ContinuousClock.now
        guard let socket, socket.post(index, user: user) else { return Ack(sent: sent, acked: sent, status: nil, body: "") }
        return Ack(sent: sent, acked: .now, status: 200, body: "")
    }

    /// Command `index` as a Teams message from user `user`, mentioning the bot in a channel
    /// thread of the command's own (`bench-<index>`), signed as the Bot Connector signs it.
    func sendTeamsActivity(_ index: Int, user: Int) async -> Ack {
        let activity: JSONValue = [
            "type": "message", "id": .string("bench-activity-\(index)"), "serviceUrl": .string(sink.teamsServiceURL), "channelId": "msteams",
            "from": ["id": .string("29:bench-user-\(user)"), "name": .string("User \(user)")],
            "conversation": ["id": .string("bench-\(index)"), "conversationType": "channel", "tenantId": "bench-tenant"],
            "recipient": ["id": .string("28:" + ReplySink.teamsAppID), "name": "Rhea"],
            "text": .string("<at>Rhea</at> translate ja Good morning, this is command number \(index)"),
            "entities": [["type": "mention", "text": "<at>Rhea</at>", "mentioned": ["id": .string("28:" + ReplySink.teamsAppID), "name": "Rhea"]]],
            "channelData": ["team": ["id": "bench-team"], "channel": ["id": .string("bench-channel-\(user)")]],
        ]
        var request = HTTPClientRequest(url: url(for: user))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Authorization", value: "Bearer \(teamsToken)")
        request.body = .bytes(ByteBuffer(bytes: activity.encoded()))
        return await execute(request)
    }

    /// Command `index` as a Google Chat event: a mention of the app in a space of the command's
    /// own, signed as Google Chat signs it. An answer ready in time comes back in the event's
    /// answer, recorded here as the sink records what comes through the Chat API.
    func sendGoogleChatEvent(_ index: Int, user: Int) async -> Ack {
        var request = HTTPClientRequest(url: url(for: user))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Authorization", value: "Bearer \(googleChatToken)")
        request.body = .bytes(ByteBuffer(bytes: GoogleChatSink.event(index, user: user).encoded()))
        let ack = await execute(request)
        if ack.status == 200, ack.body.contains("command number") || ack.isBusy {
            sink.arrived(index, at: ack.acked, busy: ack.isBusy, message: "google-chat:event:\(index)")
        }
        return ack
    }

    /// The slash command's token the relay is started with (`MATTERMOST_COMMAND_TOKENS`).
    static let mattermostCommandToken = "benchcommandtoken000000001"

    /// Command `index` as a Mattermost slash command from user `user` in their own channel: the
    /// form Mattermost POSTs, its token in `Authorization: Token …` and the `token` field. The
    /// relay answers with the bot's post, which the sink reads the command's number from.
    func sendMattermostCommand(_ index: Int, user: Int) async -> Ack {
        let body = Self.form([
            "channel_id": "benchchannel\(String(format: "%014d", user))", "channel_name": "bench", "command": "/translate",
            "response_url": sink.mattermostHookURL(for: index), "team_domain": "bench", "team_id": "benchteam00000000000000001",
            "text": "ja Good morning, this is command number \(index)", "token": Self.mattermostCommandToken, "trigger_id": "trigger\(index)",
            "user_id": "benchuser\(String(format: "%017d", user))", "user_name": "user\(user)",
        ])
        var request = HTTPClientRequest(url: url(for: user))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Authorization", value: "Token \(Self.mattermostCommandToken)")
        request.body = .bytes(ByteBuffer(string: body))
        return await execute(request)
    }

    /// The replica user `user` talks to.
    func url(for user: Int) -> String { urls[user % urls.count] }

    /// Telegram user (and private chat) id of simulated user `user`.
    static func telegramUser(_ user: Int) -> Int64 { 5_000_000_000 + Int64(user) }

    private func execute(_ request: HTTPClientRequest) async -> Ack {
        let sent = ContinuousClock.now
        do {
            let response = try await http.execute(request, timeout: .seconds(30))
            let answer = try await response.body.collect(upTo: 1 << 16)
            return Ack(sent: sent, acked: .now, status: Int(response.status.code), body: String(buffer: answer))
        } catch {
            return Ack(sent: sent, acked: .now, status: nil, body: "")
        }
    }

    static func form(_ fields: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.value)" }
            .joined(separator: "&")
    }
}
