import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import MatrixAdapter
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import Testing

/// What a relay talks to for Matrix: a real Synapse (shared by the test process) with a bot
/// account and a person of the test's own, the fake Rhea Tribunal, and the SQLite file of the
/// relay's store.
struct MatrixFakes {
    let synapse: SynapseTestServer
    /// The relay's account.
    let bot: MatrixTestUser
    /// The person typing commands.
    let alice: MatrixTestUser
    let tribunal: FakeRheaTribunal
    let database: TemporaryDatabase

    static let adminToken = "matrix-admin-token-0123456789abcdef"

    static func with<T>(_ body: (MatrixFakes) async throws -> T) async throws -> T {
        let synapse = try await SynapseTestServer.shared()
        let bot = try await synapse.register("relay")
        let alice = try await synapse.register("alice")
        return try await TemporaryDatabase.with { database in
            try await withFakeRheaTribunal { tribunal in
                try await body(MatrixFakes(synapse: synapse, bot: bot, alice: alice, tribunal: tribunal, database: database))
            }
        }
    }

    /// A relay configured as `serve` would be, pointed at the homeserver, with fast timings.
    func configuration(allowedServers: [String] = []) -> AppConfiguration {
        var configuration = AppConfiguration(storePath: database.path)
        configuration.tribunal.baseURL = tribunal.url
        configuration.tribunal.token = FakeRheaTribunal.defaultToken
        configuration.tribunal.timeouts = .init(quick: .seconds(30), dialog: .seconds(30), tribunal: .seconds(30), health: .seconds(1))
        configuration.tribunal.retry = RetryPolicy(attempts: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        configuration.platforms = [
            MatrixPlatform(
                configuration: MatrixConfiguration(
                    homeserverURL: synapse.url, accessToken: MatrixToken(bot.token), allowedServers: allowedServers, syncTimeout: .seconds(5)))
        ]
        configuration.delivery = SlackFakes.fastDelivery
        configuration.shutdownGrace = .seconds(1)
        configuration.http.idleTimeout = HarnessTimings.idleTimeout
        configuration.http.adminToken = Self.adminToken
        return configuration
    }

    /// Builds the relay as `serve` does and runs it while `body` talks to the homeserver.
    func withRelay<T: Sendable>(_ configuration: AppConfiguration, _ body: @escaping @Sendable (MatrixRelay) async throws -> T) async throws -> T {
        var logger = Logger(label: "test.matrix-e2e")
        logger.logLevel = .warning
        let app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: logger)
        let fakes = self
        return try await app.test(.live) { client in
            try await body(MatrixRelay(client: client, fakes: fakes))
        }
    }
}

/// A running relay, the homeserver and the people on it.
struct MatrixRelay: Sendable {
    let client: any TestClientProtocol
    let fakes: MatrixFakes

    var alice: MatrixTestUser { fakes.alice }
    var bot: MatrixTestUser { fakes.bot }
    var tribunal: FakeRheaTribunal { fakes.tribunal }

    /// A room alice made and invited the bot to, once the bot has joined it.
    func room(encrypted: Bool = false) async throws -> String {
        let room = try await alice.createRoom(invite: [bot.user], encrypted: encrypted)
        try await eventually("the bot to join \(room)") { try await alice.members(of: room).contains(bot.user) }
        return room
    }

    /// The direct room the bot opened with alice (for a private answer), once she has joined it
    /// and the relay is idle again.
    func joinDirectRoom() async throws -> String {
        var direct = ""
        try await eventually("a direct room from the bot") {
            guard let invited = try await alice.invitations().first else { return false }
            direct = invited
            return true
        }
        try await alice.join(direct)
        try await settled()
        return direct
    }

    /// Waits until no run is in flight and the outbox is empty.
    func settled() async throws { try await waitUntilIdle(client, adminToken: MatrixFakes.adminToken) }

    /// The bot's messages in `room` as a reader sees them, oldest first: each with every text it
    /// showed (edits applied in order) and the event it answers.
    func botMessages(in room: String) async throws -> [MatrixShownMessage] {
        try MatrixShownMessage.read(try await alice.events(in: room), from: bot.user)
    }

    /// Waits until the bot has answered `event` in `room` (a message replying to it), then until
    /// the relay is idle; returns the bot's messages that answer it.
    func answers(to event: String, in room: String) async throws -> [MatrixShownMessage] {
        try await eventually("the bot to answer \(event)") {
            try await botMessages(in: room).contains { $0.replyTo == event }
        }
        try await settled()
        return try await botMessages(in: room).filter { $0.replyTo == event }
    }
}

/// One message the bot posted, as a Matrix client shows it.
struct MatrixShownMessage: Sendable {
    var id: String
    /// The texts it showed, first the original, then each edit's.
    var history: [String]
    /// The HTML of its latest version.
    var html: String?
    /// The event it replies to.
    var replyTo: String?
    /// The thread it is in.
    var thread: String?
    /// Its `m.mentions` (the latest version's), as sent.
    var mentions: JSONValue?
    var msgtype: String?

    /// What it shows now.
    var text: String { history.last ?? "" }

    /// The bot's messages among `events` (oldest first), edits folded into the message they edit.
    static func read(_ events: [JSONValue], from bot: String) throws -> [MatrixShownMessage] {
        var messages: [MatrixShownMessage] = []
        for event in events where event["sender"]?.stringValue == bot && event["type"]?.stringValue == "m.room.message" {
            let content = event["content"] ?? [:]
            let relation = content["m.relates_to"]
            if relation?["rel_type"]?.stringValue == "m.replace", let original = relation?["event_id"]?.stringValue {
                guard let index = messages.firstIndex(where: { $0.id == original }), let new = content["m.new_content"] else { continue }
                messages[index].history.append(Self.shown(new["body"]?.stringValue ?? ""))
                messages[index].html = new["formatted_body"]?.stringValue
                messages[index].mentions = new["m.mentions"]
                continue
            }
            messages.append(
                MatrixShownMessage(
                    id: event["event_id"]?.stringValue ?? "", history: [Self.shown(content["body"]?.stringValue ?? "")],
                    html: content["formatted_body"]?.stringValue, replyTo: relation?["m.in_reply_to"]?["event_id"]?.stringValue,
                    thread: relation?["rel_type"]?.stringValue == "m.thread" ? relation?["event_id"]?.stringValue : nil, mentions: content["m.mentions"],
                    msgtype: content["msgtype"]?.stringValue))
        }
        return messages
    }

    /// A body as read: without the invisible word joiners that break mentions.
    static func shown(_ body: String) -> String {
        String(String.UnicodeScalarView(body.unicodeScalars.filter { $0 != "\u{2060}" }))
    }
}
