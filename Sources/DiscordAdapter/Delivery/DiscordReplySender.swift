import Crypto
import Foundation
public import Logging
public import RelayCore
public import RelayPipeline
public import RelayPlatform

/// Delivers outbox entries to Discord (the `ReplySender` for platform "discord").
///
/// - An interaction's answer completes its deferred response: the first part edits
///   `@original` (`PATCH /webhooks/{app}/{token}/messages/@original`), later parts are
///   follow-ups; a chain's progress edits `@original` too ("⏳ Running… 2/5"), so the result
///   replaces it. A private result under a public deferral goes as an ephemeral follow-up, and
///   `@original` is left saying so.
/// - After the token's 15 minutes (`DiscordAddress.tokenExpiresAt`), and for mentions, DMs and
///   reactions, the bot token posts into the channel (`POST /channels/{c}/messages`, as a reply
///   to the message that asked, with a nonce so a retried create is not posted twice); a private
///   result goes by DM then.
/// - A part goes by the first of its routes Discord accepts; a route refused for good (an
///   unknown webhook, a missing permission) hands it to the next, a passing failure (429, 5xx,
///   a timeout) is returned for the outbox to retry. 429s become `.rateLimited` with Discord's
///   `retry_after`.
public struct DiscordReplySender: ReplySender {
    public let platform = DiscordPlatform.name
    let api: any DiscordREST
    /// A bot token is configured, so channel posts work.
    let canPost: Bool
    let box: DiscordSecretBox
    let clock: any RelayClock
    let logger: Logger

    /// The `platformRef` of an interaction's original response.
    static let originalRef = "@original"

    public init(api: any DiscordREST, canPost: Bool, box: DiscordSecretBox, clock: any RelayClock = SystemClock(), logger: Logger) {
        self.api = api
        self.canPost = canPost
        self.box = box
        self.clock = clock
        self.logger = logger
    }

    /// The REST client's rate limiter paces every call (per channel, per webhook, globally).
    public func minimumInterval(for entry: OutboxEntry) -> Duration { .zero }

    /// One way a message can reach Discord.
    enum Route: Sendable, Hashable {
        /// Edit the interaction's original (deferred) response.
        case editOriginal
        /// A follow-up through the interaction's webhook.
        case followup(ephemeral: Bool)
        /// Edit an earlier channel message (the run's progress line).
        case editMessage(id: String)
        /// Post into the channel with the bot token, as a reply to `replyTo`.
        case channel(replyTo: String?)
        /// Post to the asker by DM with the bot token.
        case directMessage
    }

    public func deliver(_ entry: OutboxEntry, earlier: OutboxEntry?) async -> DeliveryOutcome {
        guard let address = DiscordAddress.decode(entry.address) else {
            return .rejected(reason: "the stored Discord address cannot be read")
        }
        let token = address.tokenUsable(at: clock.now) ? address.sealedToken.flatMap(box.open).map(DiscordToken.init) : nil
        do throws(DiscordAPIError) {
            switch entry.content {
            case .progress(let step):
                return try await deliverProgress(step, address: address, token: token, earlierRef: earlier?.platformRef, entry: entry)
            case .reply(let reply):
                if reply.isPrivate, let earlier, case .reply(let original) = earlier.content, original.isPrivate {
                    return try await replaceOriginal(with: reply, address: address, token: token)
                }
                return await deliverPart(of: reply, entry: entry, address: address, token: token, earlierRef: earlier?.platformRef)
            case .parkedRun:
                return .rejected(reason: "a parked run is not a message")
            }
        } catch {
            return error.deliveryOutcome
        }
    }

    private func deliverProgress(_ step: RunProgress, address: DiscordAddress, token: DiscordToken?, earlierRef: String?, entry: OutboxEntry)
        async throws(DiscordAPIError) -> DeliveryOutcome
    {
        let message = DiscordRenderer.render(step)
        if let token, let application = address.applicationID, address.webhook == .original {
            _ = try await api.editOriginalResponse(applicationID: application, token: token, body: message.body())
            return .sent(platformRef: Self.originalRef)
        }
        // A button's follow-up answer has no message of its own to edit; the result comes anyway.
        guard canPost, address.sealedToken == nil else { return .sent(platformRef: nil) }
        if let ref = earlierRef, ref != Self.originalRef {
            return .sent(platformRef: try await api.editMessage(channelID: address.channel, messageID: ref, body: message.body()))
        }
        let body = Self.channelBody(message, replyTo: address.replyTo, nonce: Self.nonce(entry, part: 0))
        return .sent(platformRef: try await api.createMessage(channelID: address.channel, body: body))
    }

    /// Sends part `entry.partsDelivered` of `reply`: `.partDelivered` while more remain, `.sent`
    /// after the last (with the first part's message id).
    private func deliverPart(of reply: Reply, entry: OutboxEntry, address: DiscordAddress, token: DiscordToken?, earlierRef: String?) async
        -> DeliveryOutcome
    {
        let messages = DiscordRenderer.render(reply, postToChannelID: reply.isPrivate ? entry.id : nil)
        let part = entry.partsDelivered
        guard part < messages.count else { return .sent(platformRef: nil) }
        let routes = Self.routes(isPrivate: reply.isPrivate, part: part, address: address, hasToken: token != nil, canPost: canPost, earlierRef: earlierRef)
        let outcome = await send(messages[part], entry: entry, part: part, routes: routes, address: address, token: token)
        guard case .sent(let ref) = outcome else { return outcome }
        let isLast = part == messages.count - 1
        if isLast, reply.isPrivate { await tidyPublicTrace(address: address, token: token, earlierRef: earlierRef) }
        if !isLast { return .partDelivered(platformRef: ref) }
        return .sent(platformRef: part == 0 ? ref : nil)
    }

    /// The routes for one part, best first.
    static func routes(isPrivate: Bool, part: Int, address: DiscordAddress, hasToken: Bool, canPost: Bool, earlierRef: String?) -> [Route] {
        let original = hasToken && address.webhook == .original && part == 0
        if isPrivate {
            guard hasToken else { return canPost ? [.directMessage] : [] }
            return original && address.ephemeral == true ? [.editOriginal] : [.followup(ephemeral: true)]
        }
        let post: [Route] = canPost ? [.channel(replyTo: part == 0 ? address.replyTo : nil)] : []
        if hasToken {
            return (original && address.ephemeral != true ? [.editOriginal] : [.followup(ephemeral: false)]) + post
        }
        if part == 0, canPost, let ref = earlierRef, ref != originalRef {
            return [.editMessage(id: ref)] + post
        }
        return post
    }

    /// Tries `routes` in order until Discord accepts `message`.
    private func send(_ message: DiscordMessage, entry: OutboxEntry, part: Int, routes: [Route], address: DiscordAddress, token: DiscordToken?) async
        -> DeliveryOutcome
    {
        var refusals: [String] = []
        for route in routes {
            do throws(DiscordAPIError) {
                return .sent(platformRef: try await send(message, via: route, entry: entry, part: part, address: address, token: token))
            } catch {
                guard case .rejected(let reason) = error.deliveryOutcome else { return error.deliveryOutcome }
                refusals.append(reason)
                if route != routes.last {
                    logger.notice("discord: a route refused a reply; trying the next one", metadata: ["reason": "\(reason)"])
                }
            }
        }
        guard !refusals.isEmpty else {
            return .rejected(reason: "no way to reach Discord: the interaction token has expired and DISCORD_BOT_TOKEN is not set")
        }
        return .rejected(reason: refusals.joined(separator: "; then "))
    }

    private func send(_ message: DiscordMessage, via route: Route, entry: OutboxEntry, part: Int, address: DiscordAddress, token: DiscordToken?)
        async throws(DiscordAPIError) -> String?
    {
        switch route {
        case .editOriginal:
            guard let token, let application = address.applicationID else { throw .invalidRequest(endpoint: "@original", reason: "no interaction token") }
            _ = try await api.editOriginalResponse(applicationID: application, token: token, body: message.body())
            return Self.originalRef
        case .followup(let ephemeral):
            guard let token, let application = address.applicationID else { throw .invalidRequest(endpoint: "follow-up", reason: "no interaction token") }
            return try await api.createFollowup(applicationID: application, token: token, body: message.body(ephemeral: ephemeral))
        case .editMessage(let id):
            return try await api.editMessage(channelID: address.channel, messageID: id, body: message.body())
        case .channel(let replyTo):
            return try await api.createMessage(
                channelID: address.channel, body: Self.channelBody(message, replyTo: replyTo, nonce: Self.nonce(entry, part: part)))
        case .directMessage:
            let channel = try await api.directMessageChannel(userID: address.user)
            return try await api.createMessage(channelID: channel, body: Self.channelBody(message, replyTo: nil, nonce: Self.nonce(entry, part: part)))
        }
    }

    /// Puts `reply` in place of the message that holds its button (the earlier private result),
    /// through the click's webhook; skipped without a usable token (the result was delivered).
    private func replaceOriginal(with reply: Reply, address: DiscordAddress, token: DiscordToken?) async throws(DiscordAPIError) -> DeliveryOutcome {
        guard let token, let application = address.applicationID, let message = DiscordRenderer.render(reply).last else { return .sent(platformRef: nil) }
        _ = try await api.editOriginalResponse(applicationID: application, token: token, body: message.body())
        return .sent(platformRef: nil)
    }

    /// A private result leaves the public "thinking…" response or progress line saying where the
    /// result went. Best effort: the result is delivered; a stale line is only cosmetic.
    private func tidyPublicTrace(address: DiscordAddress, token: DiscordToken?, earlierRef: String?) async {
        let note = DiscordMessage(content: "Finished — the result was sent privately to the person who asked.").body()
        do throws(DiscordAPIError) {
            if let token, let application = address.applicationID, address.webhook == .original, address.ephemeral != true {
                _ = try await api.editOriginalResponse(applicationID: application, token: token, body: note)
            } else if canPost, address.sealedToken == nil, let ref = earlierRef, ref != Self.originalRef {
                _ = try await api.editMessage(channelID: address.channel, messageID: ref, body: note)
            }
        } catch {
            logger.notice("discord: could not tidy the public trace of a private result", metadata: ["reason": "\(error.reason)"])
        }
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

    /// At most 25 characters, the same for every try of one part of one entry.
    static func nonce(_ entry: OutboxEntry, part: Int) -> String {
        let digest = SHA256.hash(data: Data("\(entry.id):\(part)".utf8))
        return String(digest.map { String(format: "%02x", $0) }.joined().prefix(25))
    }
}
