import Crypto
import Foundation
import RelayCore
import RelayPipeline
import RelayPlatform

/// Discord's delivery primitives, for `Deliverer` (platform "discord").
///
/// - An interaction's deferred response (`@original`) is the run's placeholder: progress edits
///   it ("⏳ Running… 2/5") and the answer's first part replaces it
///   (`PATCH /webhooks/{app}/{token}/messages/@original`); later parts are follow-ups. A private
///   answer under a public deferral goes as an ephemeral follow-up, and `@original` is left
///   saying so.
/// - After the token's 15 minutes (`DiscordAddress.tokenExpiresAt`), and for mentions, DMs and
///   reactions, the bot token posts into the channel (`POST /channels/{c}/messages`, as a reply
///   to the message that asked, with a nonce so a retried create is not posted twice); a private
///   answer goes by DM then.
/// - 429s become `.rateLimited` with Discord's `retry_after`; the REST client's rate limiter
///   paces every call (per channel, per webhook, globally), so `minimumInterval` adds nothing.
struct DiscordDelivery: DeliveryPlatform {
    typealias Failure = DiscordAPIError

    typealias Place = Audience

    /// One way a new message can reach Discord.
    enum Route: Sendable, Hashable {
        /// A follow-up through the interaction's webhook.
        case followup(ephemeral: Bool)
        /// Post into the channel with the bot token, as a reply to `replyTo`.
        case channel(replyTo: String?)
        /// Post to the asker by DM with the bot token.
        case directMessage
        /// Replace the interaction's original response: the message holding a pressed button.
        case editOriginal
    }

    let platform = DiscordPlatform.name
    let api: any DiscordREST
    /// A bot token is configured, so channel posts work.
    let canPost: Bool
    let box: DiscordSecretBox
    let clock: any RelayClock
    let partialEdits = EditBudget(perMinute: 25 * 60, burst: 25)

    /// The `platformRef` of an interaction's original response.
    static let originalRef = "@original"

    /// Edits follow the route's bucket (the REST client reads `X-RateLimit-*` and waits):
    /// once a second at most, 30 times at most.
    func streaming(at address: String) -> StreamingPace { StreamingPace(interval: .seconds(1), maxEdits: 30) }

    /// The bot's global limit is 50 requests a second: answers written at once share 25 edits a
    /// second, half of it.
    func admitsPartialEdit(at address: String, now: Date) -> Bool { partialEdits.take(now: now) }

    // MARK: Primitives

    func decode(_ address: String) -> DiscordAddress? { DiscordAddress.decode(address) }

    func render(_ reply: Reply, entryID: String, address: DiscordAddress) -> [DiscordMessage] {
        DiscordRenderer.render(reply, postToChannelID: reply.isPrivate ? entryID : nil)
    }

    func render(_ progress: RunProgress) -> DiscordMessage { DiscordRenderer.render(progress) }

    func render(note: String) -> DiscordMessage { DiscordMessage(content: DiscordMarkdown.escape(note)) }

    func place(of reply: Reply, address: DiscordAddress) -> Place { reply.isPrivate ? .asker : .channel }

    /// A private reply goes as an ephemeral follow-up or a direct message, never to the channel.
    func reachesAskerAlone(_ reply: Reply, address: DiscordAddress) async -> Bool { reply.isPrivate }

    /// The interaction's deferred response while its token works (seen by the asker alone when
    /// it was deferred as ephemeral); else the progress message the bot posted in the channel.
    func placeholder(address: DiscordAddress, earlier: OutboxEntry?) -> Placeholder<Place>? {
        if token(address) != nil {
            guard address.webhook == .original else { return nil }
            let ephemeral = address.ephemeral == true
            return Placeholder(ref: Self.originalRef, place: ephemeral ? .asker : .channel, isPublic: !ephemeral)
        }
        guard canPost, let ref = earlier?.platformRef, ref != Self.originalRef else { return nil }
        return Placeholder(ref: ref, place: .channel)
    }

    /// Only bot messages: a button's follow-up answer has no message of its own to edit (the
    /// answer comes anyway).
    func progressRoute(address: DiscordAddress) -> Route? {
        canPost && address.sealedToken == nil ? .channel(replyTo: address.replyTo) : nil
    }

    func routes(for part: PartToSend<DiscordAddress, Place>) -> [PartRoute<Route>] {
        let hasToken = token(part.address) != nil
        let post: [Route] = canPost ? [.channel(replyTo: part.index == 0 ? part.address.replyTo : nil)] : []
        if part.reply.isPrivate {
            guard hasToken else { return canPost ? [.post(.directMessage)] : [] }
            return part.editsPlaceholder ? [] : [.post(.followup(ephemeral: true))]
        }
        guard hasToken else { return post.map { .post($0) } }
        return ((part.editsPlaceholder ? [] : [.followup(ephemeral: false)]) + post).map { .post($0) }
    }

    /// Through the click's webhook; skipped without a usable token (the result was delivered).
    func buttonMessage(address: DiscordAddress) -> ButtonMessage<Route> {
        token(address) != nil ? .replace(via: .editOriginal) : .unreachable
    }

    func post(_ message: DiscordMessage, via route: Route, address: DiscordAddress, key: SendKey) async throws(DiscordAPIError) -> String? {
        switch route {
        case .followup(let ephemeral):
            let (application, token) = try webhook(address, endpoint: "follow-up")
            return try await api.createFollowup(applicationID: application, token: token, body: message.body(ephemeral: ephemeral))
        case .channel(let replyTo):
            return try await api.createMessage(channelID: address.channel, body: Self.channelBody(message, replyTo: replyTo, nonce: Self.nonce(key)))
        case .directMessage:
            let channel = try await api.directMessageChannel(userID: address.user)
            return try await api.createMessage(channelID: channel, body: Self.channelBody(message, replyTo: nil, nonce: Self.nonce(key)))
        case .editOriginal:
            let (application, token) = try webhook(address, endpoint: "@original")
            _ = try await api.editOriginalResponse(applicationID: application, token: token, body: message.body())
            return Self.originalRef
        }
    }

    func edit(_ placeholder: Placeholder<Place>, to message: DiscordMessage, address: DiscordAddress, key: SendKey) async throws(DiscordAPIError) {
        if placeholder.ref == Self.originalRef {
            let (application, token) = try webhook(address, endpoint: "@original")
            _ = try await api.editOriginalResponse(applicationID: application, token: token, body: message.body())
        } else {
            _ = try await api.editMessage(channelID: address.channel, messageID: placeholder.ref, body: message.body())
        }
    }

    func unreachable(address: DiscordAddress) -> String {
        "no way to reach Discord: the interaction token has expired and DISCORD_BOT_TOKEN is not set"
    }

    // MARK: Details

    /// The interaction token, while Discord still takes it.
    private func token(_ address: DiscordAddress) -> DiscordToken? {
        guard address.tokenUsable(at: clock.now) else { return nil }
        return address.sealedToken.flatMap(box.open).map(DiscordToken.init)
    }

    private func webhook(_ address: DiscordAddress, endpoint: String) throws(DiscordAPIError) -> (application: String, token: DiscordToken) {
        guard let token = token(address), let application = address.applicationID else {
            throw .invalidRequest(endpoint: endpoint, reason: "no interaction token")
        }
        return (application, token)
    }

    /// A channel message: the rendered body, as a reply when `replyTo` is given (without pinging
    /// its author), with a nonce Discord enforces, so a create retried after a lost answer
    /// returns the first message instead of posting a second.
    static func channelBody(_ message: DiscordMessage, replyTo: String?, nonce: String) -> JSONValue {
        guard case .object(var body) = message.body() else { return message.body() }
        if let replyTo { body["message_reference"] = ["message_id": .string(replyTo), "fail_if_not_exists": false] }
        body["nonce"] = .string(nonce)
        body["enforce_nonce"] = true
        return .object(body)
    }

    /// At most 25 characters, the same for every try of one send of one entry.
    static func nonce(_ key: SendKey) -> String {
        let digest = SHA256.hash(data: Data("\(key.entryID):\(key.step)".utf8))
        return String(digest.map { String(format: "%02x", $0) }.joined().prefix(25))
    }
}
