import AsyncHTTPClient
import Foundation
import Glibc
import NIOCore
import NIOHTTP1
import RelayCore
import RelayTestSupport
import RelayTestTags
import Synchronization
import Testing

/// Issue 40, point 5: a crash in the middle of an answer being written leaves no second message.
/// The real `rhea-relay serve` on a SQLite store, its backend a council of one fake model that
/// streams slowly, is killed with SIGKILL once the platform shows part of the answer, and
/// started again on the same store. The run runs again and writes into the same message: in the
/// end the platform shows exactly one message with the answer, whole, and nothing of the
/// writing left — on each of the seven platforms.
@Suite("No visible double after kill -9 mid-stream", .serialized, .tags(.peers))
struct StreamingCrashTests {
    static let pieces = [
        "Réponse ", "écrite ", "pas ", "à ", "pas, ", "interrompue ", "par ", "un ", "arrêt ", "brutal, ", "puis ", "reprise ", "en ", "entier ",
        "au ", "même ", "endroit.",
    ]
    static var answer: String { pieces.joined() }

    /// The environment every platform's `serve` shares: the council of one streaming model.
    static func council(_ model: FakeOpenAIServer) -> [String: String] {
        [
            "TRIBUNAL_BACKEND": "council", "COUNCIL_MODELS": "writer", "COUNCIL_WRITER_BASE_URL": model.url, "COUNCIL_WRITER_MODEL": "m",
            "COUNCIL_WRITER_TIER": "cheap", "HTTP_ADMIN_TOKEN": ServeReplicas.adminToken, "LOG_LEVEL": "error",
        ]
    }

    /// Starts `serve`, `send`s the command, waits until `writing` sees part of the answer shown,
    /// kills the process, starts it again on the same store, waits until `done` sees the whole
    /// answer (the run runs again once its lease lapses), then until the process is idle.
    static func crashMidStream(
        environment: [String: String], cli: CLIProcess, send: (Int) async throws -> Void, writing: () async throws -> Bool,
        done: () async throws -> Bool
    ) async throws {
        let first = try await ServeProcess(environment: environment, directory: cli.directory)
        var second: ServeProcess?
        do {
            try await send(first.port)
            try await eventually("part of the answer shown while written", safety: .seconds(60)) { try await writing() }
            kill(first.process.processIdentifier, SIGKILL)
            await first.exited()
            second = try await ServeProcess(environment: environment, directory: cli.directory)
            try await eventually("the whole answer shown after the restart", safety: .seconds(90)) { try await done() }
            try await VisibleDoublesTests.waitUntilIdle(port: second!.port, within: .seconds(90))
        } catch {
            let said = await first.stop() + "\n---\n" + (await second?.stop() ?? "")
            Issue.record("serve said: \(said.suffix(3000))")
            throw error
        }
        _ = await second?.stop()
    }

    /// The fake model, streaming the answer over about 6 s.
    static func withWriter<T>(_ body: (FakeOpenAIServer) async throws -> T) async throws -> T {
        try await withFakeOpenAIServer(persona: .pieces(pieces)) { model in
            model.setStream(FakeOpenAIStream(piecesPerSecond: 3))
            return try await body(model)
        }
    }

    /// Whether `text` shows the whole answer, as a person reads it.
    static func holdsAnswer(_ text: String?) -> Bool { visible(text ?? "").contains(answer) }

    static func isWriting(_ text: String) -> Bool { text.contains(PartialAnswer.writingNote) }

    /// What a person reads: the invisible joiners that break mentions taken out, and the
    /// platforms' escapes undone.
    static func visible(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\u{2060}" && $0 != "\u{200B}" && $0 != "\\" }))
    }

    // MARK: Telegram

    @Test func telegram() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        try await Self.withWriter { model in
            try await withFakeTelegramBotAPI { telegram in
                let chat: Int64 = 53_000_001
                let environment = Self.council(model).merging([
                    "TELEGRAM_BOT_TOKEN": telegram.token, "TELEGRAM_API_URL": telegram.url, "TELEGRAM_MODE": "webhook",
                    "TELEGRAM_WEBHOOK_SECRET": VisibleDoublesTests.telegramSecret,
                ]) { $1 }
                func shown() -> [FakeTelegramMessage] { telegram.messages(chat: chat).filter { !$0.deleted } }
                try await Self.crashMidStream(environment: environment, cli: cli) { port in
                    let update = TelegramUpdates.message(updateID: 990, messageID: 10, chat: chat, from: chat, text: "/ai write it")
                    let answer = try await telegram.deliver(
                        update, to: "http://127.0.0.1:\(port)/telegram/webhook", secretToken: VisibleDoublesTests.telegramSecret)
                    #expect(answer.status == 200)
                } writing: {
                    shown().contains { Self.isWriting($0.text) && $0.text.contains("Réponse") }
                } done: {
                    shown().contains { Self.holdsAnswer($0.text) && !Self.isWriting($0.text) }
                }
                let messages = shown()
                #expect(messages.count == 1, "one message, the placeholder written into: \(messages.map(\.text))")
                #expect(Self.holdsAnswer(messages.first?.text), "\(messages.first?.text ?? "")")
                #expect(!Self.isWriting(messages.first?.text ?? ""))
                #expect(model.requests().count >= 2, "the run ran again after the restart")
            }
        }
    }

    // MARK: Teams

    @Test func teams() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        try await Self.withWriter { model in
            try await withFakeBotFramework { framework in
                let thread = FakeBotFramework.thread("crash")
                let environment = Self.council(model).merging([
                    "TEAMS_APP_ID": FakeBotFramework.appID, "TEAMS_APP_PASSWORD": FakeBotFramework.appPassword,
                    "TEAMS_OPENID_METADATA_URL": framework.openIDMetadataURL, "TEAMS_TOKEN_URL": framework.tokenURL,
                ]) { $1 }
                try await Self.crashMidStream(environment: environment, cli: cli) { port in
                    let status = await VisibleDoublesTests.activity(
                        framework.message("ai write it", conversation: thread, id: "crash-1"), port: port, framework: framework)
                    #expect(status == 200)
                } writing: {
                    framework.messages(in: thread).contains { Self.isWriting($0.text) && $0.text.contains("Réponse") }
                } done: {
                    framework.messages(in: thread).contains { Self.holdsAnswer($0.text) && !Self.isWriting($0.text) }
                }
                let messages = framework.messages(in: thread)
                #expect(messages.count == 1, "one message, the placeholder written into: \(messages.map(\.text))")
                #expect(Self.holdsAnswer(messages.first?.text), "\(messages.first?.text ?? "")")
                #expect(!Self.isWriting(messages.first?.text ?? ""))
                #expect(model.requests().count >= 2, "the run ran again after the restart")
            }
        }
    }

    // MARK: Google Chat

    @Test func googleChat() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        try await Self.withWriter { model in
            try await withFakeGoogleChat { google in
                let thread = FakeGoogleChat.space + "/threads/crash"
                let key = cli.directory.appendingPathComponent("google-chat-key.json")
                try Data(google.serviceAccountJSON.utf8).write(to: key)
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key.path)
                let environment = Self.council(model).merging([
                    "GOOGLE_CHAT_AUDIENCE": FakeGoogleChat.projectNumber, "GOOGLE_CHAT_SERVICE_ACCOUNT_FILE": key.path,
                    "GOOGLE_CHAT_CERTS_URL": google.chatCertsURL, "GOOGLE_CHAT_API_URL": google.apiURL, "GOOGLE_CHAT_TOKEN_URL": google.tokenURL,
                ]) { $1 }
                try await Self.crashMidStream(environment: environment, cli: cli) { port in
                    let status = await VisibleDoublesTests.googleChatEvent(
                        google.message("ai write it", thread: thread, id: "crash-1"), port: port, google: google)
                    #expect(status == 200)
                } writing: {
                    google.messages().contains { $0.thread == thread && Self.isWriting($0.text) && $0.text.contains("Réponse") }
                } done: {
                    google.messages().contains { $0.thread == thread && Self.holdsAnswer($0.text) && !Self.isWriting($0.text) }
                }
                let messages = google.messages().filter { $0.thread == thread }
                #expect(messages.count == 1, "one message, the first text written into: \(messages.map(\.text))")
                #expect(Self.holdsAnswer(messages.first?.text), "\(messages.first?.text ?? "")")
                #expect(!Self.isWriting(messages.first?.text ?? ""))
                #expect(model.requests().count >= 2, "the run ran again after the restart")
            }
        }
    }

    // MARK: Slack

    @Test func slack() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        try await Self.withWriter { model in
            try await withFakeSlackWebAPI { slack in
                let channel = "C0STREAMK"
                let environment = Self.council(model).merging([
                    "SLACK_SIGNING_SECRET": ServeReplicas.signingSecret, "SLACK_API_URL": slack.apiURL, "SLACK_BOT_TOKEN": slack.botToken,
                ]) { $1 }
                /// The channel's messages as shown: the fallback text and the blocks (the answer being
                /// written has its note in a block).
                func shown() -> [String] {
                    slack.messages(channel: channel).filter { $0.ephemeralUser == nil }.map {
                        $0.text + "\n" + ($0.blocks.map { String(decoding: $0.encoded(), as: UTF8.self) } ?? "")
                    }
                }
                try await Self.crashMidStream(environment: environment, cli: cli) { port in
                    let event = SlackPayloads.appMention(
                        text: "<@\(FakeSlackWebAPI.botUserID)> ai write it", user: "U0STREAM", channel: channel, ts: "1700000400.000100",
                        eventID: "Ev0STREAMK", team: "T0FAULT", botUserID: FakeSlackWebAPI.botUserID)
                    #expect(await ServeReplicas.event(port: port, event)?.status == 200)
                } writing: {
                    shown().contains { Self.isWriting($0) && $0.contains("Réponse") }
                } done: {
                    shown().contains { Self.holdsAnswer($0) && !Self.isWriting($0) }
                }
                let messages = shown()
                #expect(messages.count == 1, "one message, the placeholder written into: \(messages)")
                #expect(Self.holdsAnswer(messages.first), "\(messages.first ?? "")")
                #expect(!Self.isWriting(messages.first ?? ""))
                #expect(slack.requests(path: "chat.postMessage").count == 1, "one placeholder posted, across both processes")
                #expect(model.requests().count >= 2, "the run ran again after the restart")
            }
        }
    }

    /// A slash command's answer is written at its `response_url`, each post replacing the last:
    /// after the crash the run writes there again, and one message ends whole.
    @Test func slackSlashCommand() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        try await Self.withWriter { model in
            try await withFakeSlackWebAPI { slack in
                let responseURL = slack.makeResponseURL()
                let environment = Self.council(model).merging([
                    "SLACK_SIGNING_SECRET": ServeReplicas.signingSecret, "SLACK_API_URL": slack.apiURL, "SLACK_BOT_TOKEN": slack.botToken,
                ]) { $1 }
                func shown() -> [String] {
                    slack.responses(responseURL: responseURL).map {
                        $0.text + "\n" + ($0.blocks.map { String(decoding: $0.encoded(), as: UTF8.self) } ?? "")
                    }
                }
                try await Self.crashMidStream(environment: environment, cli: cli) { port in
                    let answer = await ServeReplicas.slashCommand(
                        port: port, command: "/ai", text: "write it", responseURL: responseURL, channel: "C0STREAMS")
                    #expect(answer?.status == 200)
                } writing: {
                    shown().contains { Self.isWriting($0) && $0.contains("Réponse") }
                } done: {
                    shown().contains { Self.holdsAnswer($0) && !Self.isWriting($0) }
                }
                let messages = shown()
                #expect(messages.count == 1, "one message at the response_url: \(messages)")
                #expect(Self.holdsAnswer(messages.first), "\(messages.first ?? "")")
                #expect(slack.requests(responseURL: responseURL).count <= 5, "within Slack's 5 posts")
                #expect(slack.requests(path: "chat.postMessage").isEmpty)
                #expect(model.requests().count >= 2, "the run ran again after the restart")
            }
        }
    }

    // MARK: Discord

    @Test func discord() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let signer = FakeDiscordSigner()
        try await Self.withWriter { model in
            try await withFakeDiscordAPI { discord in
                let gateway = try await FakeDiscordGateway.start()
                discord.attach(gateway: gateway)
                let token = "interaction-token-stream-crash"
                let environment = Self.council(model).merging([
                    "DISCORD_PUBLIC_KEY": signer.publicKeyHex, "DISCORD_BOT_TOKEN": discord.botToken,
                    "DISCORD_APPLICATION_ID": FakeDiscordAPI.applicationID, "DISCORD_API_URL": discord.apiURL,
                ]) { $1 }
                func original() -> String {
                    discord.originals()[token].map { String(decoding: $0.body.encoded(), as: UTF8.self) } ?? ""
                }
                do {
                    try await Self.crashMidStream(environment: environment, cli: cli) { port in
                        let interaction = FakeDiscordInteractions.command(
                            "ai", options: [("prompt", .string("write it"))], id: "130000000000000990", token: token, channel: "110000000000000990")
                        #expect(await VisibleDoublesTests.interact(interaction, port: port, signer: signer) == 200)
                    } writing: {
                        Self.isWriting(original()) && original().contains("Réponse")
                    } done: {
                        Self.holdsAnswer(original()) && !Self.isWriting(original())
                    }
                } catch {
                    await gateway.stop()
                    throw error
                }
                await gateway.stop()
                #expect(Self.holdsAnswer(original()), "\(original())")
                #expect(!Self.isWriting(original()))
                let elsewhere = (discord.requests(FakeDiscordAPI.createMessage) + discord.requests(FakeDiscordAPI.followup)).filter {
                    $0.rawBody.contains("Réponse")
                }
                #expect(elsewhere.isEmpty, "the answer only in the interaction's response: \(elsewhere.map(\.rawBody))")
                #expect(model.requests().count >= 2, "the run ran again after the restart")
            }
        }
    }

    // MARK: Mattermost

    @Test func mattermost() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let commandToken = "stream-crash-command-token-0001"
        try await Self.withWriter { model in
            try await withFakeMattermost { mattermost in
                let channel = "chstreamcrash0000000000001"
                mattermost.addChannel(channel)
                let environment = Self.council(model).merging([
                    "MATTERMOST_URL": mattermost.url, "MATTERMOST_BOT_TOKEN": FakeMattermost.botToken, "MATTERMOST_COMMAND_TOKENS": commandToken,
                    "MATTERMOST_WEBSOCKET": "false",
                ]) { $1 }
                func shown() -> [FakeMattermostPost] { mattermost.posts(channel: channel).filter { $0.via != "user" && $0.ephemeralFor == nil } }
                try await Self.crashMidStream(environment: environment, cli: cli) { port in
                    let form = [
                        ("channel_id", channel), ("command", "/ai"), ("response_url", mattermost.makeResponseURL(channel: channel)),
                        ("team_id", FakeMattermost.teamID), ("text", "write it"), ("token", commandToken), ("trigger_id", "trigger-stream-crash"),
                        ("user_id", FakeMattermost.alice), ("user_name", "alice"),
                    ].map { "\($0)=\($1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
                    var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/mattermost/commands")
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                    request.headers.add(name: "Authorization", value: "Token \(commandToken)")
                    request.body = .bytes(ByteBuffer(string: form))
                    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                    #expect(response.status.code == 200)
                } writing: {
                    shown().contains { Self.isWriting($0.message) && $0.message.contains("Réponse") }
                } done: {
                    shown().contains { Self.holdsAnswer($0.message) && !Self.isWriting($0.message) }
                }
                let posts = shown().filter { $0.message.contains("Réponse") }
                #expect(posts.count == 1, "one post, written into: \(posts.map(\.message))")
                #expect(Self.holdsAnswer(posts.first?.message), "\(posts.first?.message ?? "")")
                #expect(!Self.isWriting(posts.first?.message ?? ""))
                #expect(model.requests().count >= 2, "the run ran again after the restart")
            }
        }
    }

    // MARK: Matrix

    @Test func matrix() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let synapse = try await SynapseTestServer.shared()
        let bot = try await synapse.register("streambot")
        let alice = try await synapse.register("streamalice")
        try await Self.withWriter { model in
            let environment = Self.council(model).merging(["MATRIX_HOMESERVER_URL": synapse.url, "MATRIX_ACCESS_TOKEN": bot.token]) { $1 }
            let room = try await alice.createRoom(invite: [bot.user])
            let command = Mutex("")
            /// The bot's messages answering the command, each as it shows now (edits applied).
            func shown() async throws -> [String] {
                let events = try await alice.events(in: room)
                var answers: [String: String] = [:]
                var order: [String] = []
                for event in events where event["sender"]?.stringValue == bot.user && event["type"]?.stringValue == "m.room.message" {
                    let content = event["content"] ?? [:]
                    let relation = content["m.relates_to"]
                    if relation?["rel_type"]?.stringValue == "m.replace", let original = relation?["event_id"]?.stringValue {
                        if answers[original] != nil { answers[original] = content["m.new_content"]?["body"]?.stringValue ?? "" }
                    } else if relation?["m.in_reply_to"]?["event_id"]?.stringValue == command.withLock({ $0 }), let id = event["event_id"]?.stringValue {
                        answers[id] = content["body"]?.stringValue ?? ""
                        order.append(id)
                    }
                }
                return order.compactMap { answers[$0] }
            }
            try await Self.crashMidStream(environment: environment, cli: cli) { _ in
                try await eventually("the bot to join the room") { try await alice.members(of: room).contains(bot.user) }
                let id = try await alice.send("!ai write it", in: room)
                command.withLock { $0 = id }
            } writing: {
                try await shown().contains { Self.isWriting($0) && $0.contains("Réponse") }
            } done: {
                try await shown().contains { Self.holdsAnswer($0) && !Self.isWriting($0) }
            }
            let answers = try await shown()
            #expect(answers.count == 1, "one message, written into: \(answers)")
            #expect(Self.holdsAnswer(answers.first), "\(answers.first ?? "")")
            #expect(!Self.isWriting(answers.first ?? ""))
            #expect(model.requests().count >= 2, "the run ran again after the restart")
        }
    }
}
