public import Foundation
public import Logging
public import RelayCore
public import RelayPipeline
public import RelayPlatform

/// Delivers outbox entries to Slack (the `ReplySender` for platform "slack").
///
/// - Progress: one message posted with `chat.postMessage`, then edited with `chat.update`
///   (needs the bot token; without it progress is skipped — the result still arrives).
/// - A reply goes one part (one Slack message) per call, from `entry.partsDelivered` on, each
///   by the first of its `SlackRoute`s that Slack accepts: a public result replaces the progress
///   message when there is one, else goes to the `response_url` (slash commands, buttons), else
///   by `chat.postMessage`; a private one goes to the `response_url` as ephemeral, else by
///   `chat.postEphemeral`. A route Slack refuses falls back to the next, so a result is lost only
///   when all are refused. A `response_url` takes at most 5 parts and nothing after it expired.
/// - A private result that edits an earlier private one (the note that it was posted to the
///   channel) replaces the message holding the button, through the click's `response_url`.
/// - Slack answers 429/`ratelimited`, 5xx, `channel_not_found`… become the outbox's outcomes
///   (retry no sooner than `Retry-After`, backoff, give up).
public struct SlackReplySender: ReplySender {
    public let platform = SlackEventMapping.platform
    /// Slack allows about one `chat.*` message a second per channel.
    let webAPIInterval: Duration
    let api: any SlackWebAPI
    let canPost: Bool
    let box: SlackSecretBox
    let clock: any RelayClock
    let logger: Logger

    /// `canPost`: a bot token is configured, so `chat.*` methods work.
    public init(
        api: any SlackWebAPI, canPost: Bool, box: SlackSecretBox, webAPIInterval: Duration = .seconds(1), clock: any RelayClock = SystemClock(),
        logger: Logger
    ) {
        self.api = api
        self.canPost = canPost
        self.box = box
        self.webAPIInterval = webAPIInterval
        self.clock = clock
        self.logger = logger
    }

    /// The first part of a reply that goes to a `response_url` (a slash command's answer) is not
    /// paced: the per-channel limit is `chat.postMessage`'s. Everything else waits its turn in the
    /// channel, later parts of a reply included.
    public func minimumInterval(for entry: OutboxEntry) -> Duration {
        guard case .reply = entry.content, entry.replaces == nil, entry.partsDelivered == 0,
            SlackAddress.decode(entry.address)?.sealedResponseURL != nil
        else {
            return webAPIInterval
        }
        return .zero
    }

    /// Slack's limits bind per channel and per workspace method, not per bot at once: a slash
    /// command's answer at its `response_url` has none; `chat.postMessage` allows about one a
    /// second per channel, with short bursts. So replicas sharing a store each send the replies
    /// of the runs they ran, with no claim between (docs/replicas.md). Across replicas a conversation's
    /// entries still go one at a time and in order; two to one channel can come closer than a
    /// second, a burst Slack allows, and a 429 holds the conversation back by its Retry-After.
    public var limitsCountPerBot: Bool { false }

    /// Where the answer would go by `chat.postMessage` (mentions, DMs, reactions, buttons), which
    /// has no idempotency key: with the bot token, the run posts a placeholder and the answer is
    /// its `chat.update`. A slash command's answer needs none: its first part goes to the
    /// command's `response_url` with `replace_original`, so a resend replaces what the first
    /// send posted. Without the bot token nothing can be posted or edited: the answer goes as it
    /// can.
    public func answersByEditingPlaceholder(at address: String) -> Bool {
        guard canPost, let address = SlackAddress.decode(address) else { return false }
        return !(address.answersSlashCommand == true && address.sealedResponseURL != nil)
    }

    public func deliver(_ entry: OutboxEntry, earlier: OutboxEntry?) async -> DeliveryOutcome {
        guard let address = SlackAddress.decode(entry.address) else {
            return .rejected(reason: "the stored Slack address cannot be read")
        }
        let responseURL = address.sealedResponseURL.flatMap(box.open)
        do throws(SlackAPIError) {
            switch entry.content {
            case .progress(let step):
                guard canPost else { return .sent(platformRef: nil) }
                let message = SlackReplyRenderer.render(step)
                if let ts = earlier?.platformRef {
                    return .sent(platformRef: try await api.update(channel: address.channel, ts: ts, text: message.text, blocks: message.blocks))
                }
                return .sent(
                    platformRef: try await api.postMessage(channel: address.channel, text: message.text, blocks: message.blocks, threadTS: address.threadTS))
            case .reply(let reply):
                if reply.isPrivate, let earlier, case .reply(let original) = earlier.content, original.isPrivate {
                    return try await replaceEphemeral(with: reply, address: address, responseURL: responseURL)
                }
                return await deliverPart(of: reply, entry: entry, address: address, responseURL: responseURL, progressTS: earlier?.platformRef)
            case .parkedRun:
                return .rejected(reason: "a parked run is not a message")
            }
        } catch {
            return error.deliveryOutcome
        }
    }

    /// Sends part `entry.partsDelivered` of `reply`: `.partDelivered` while more remain, `.sent`
    /// after the last (with the first part's message id, which the outbox then keeps).
    private func deliverPart(of reply: Reply, entry: OutboxEntry, address: SlackAddress, responseURL: String?, progressTS: String?) async
        -> DeliveryOutcome
    {
        let messages = SlackReplyRenderer.render(reply, postToChannelID: reply.isPrivate ? entry.id : nil)
        let part = entry.partsDelivered
        guard part < messages.count else { return .sent(platformRef: nil) }
        let situation = SlackRoute.Situation(
            address: address, part: part, firstPartTS: entry.platformRef, progressTS: canPost ? progressTS : nil, canPost: canPost, now: clock.now)
        let routes = reply.isPrivate ? SlackRoute.forPrivatePart(situation) : SlackRoute.forPublicPart(situation)
        let outcome = await send(messages[part], routes: routes, address: address, responseURL: responseURL)
        guard case .sent(let ts) = outcome else { return outcome }
        let isLast = part == messages.count - 1
        if isLast, reply.isPrivate, let progressTS = situation.progressTS {
            await tidyProgress(progressTS, address: address)
        }
        if !isLast { return .partDelivered(platformRef: ts) }
        // A later part's id must not replace the first part's, which later edits refer to.
        return .sent(platformRef: part == 0 ? ts : nil)
    }

    /// Tries `routes` in order until Slack accepts `message`. A route refused for good passes
    /// it to the next; a passing failure is returned for the outbox to retry.
    private func send(_ message: SlackMessage, routes: [SlackRoute], address: SlackAddress, responseURL: String?) async -> DeliveryOutcome {
        var refusals: [String] = []
        for route in routes {
            do throws(SlackAPIError) {
                return .sent(platformRef: try await send(message, via: route, address: address, responseURL: responseURL))
            } catch {
                guard case .rejected(let reason) = error.deliveryOutcome else { return error.deliveryOutcome }
                refusals.append(reason)
                if route != routes.last {
                    logger.notice("slack: a route refused a reply; trying the next one", metadata: ["reason": "\(reason)"])
                }
            }
        }
        guard !refusals.isEmpty else {
            return .rejected(reason: "no way to reach Slack: SLACK_BOT_TOKEN is not set and there is no usable response_url")
        }
        return .rejected(reason: refusals.joined(separator: "; then "))
    }

    /// One message by one route; the posted message's `ts` when it has one that can be edited.
    private func send(_ message: SlackMessage, via route: SlackRoute, address: SlackAddress, responseURL: String?) async throws(SlackAPIError)
        -> String?
    {
        switch route {
        case .editProgress(let ts):
            return try await api.update(channel: address.channel, ts: ts, text: message.text, blocks: message.blocks)
        case .responseURL(let type, let replaceOriginal):
            guard let responseURL else { throw .invalidRequest(endpoint: "response_url", reason: "the response_url cannot be unsealed") }
            try await api.respond(to: responseURL, body: message.responseURLBody(type, replaceOriginal: replaceOriginal))
            return nil
        case .postMessage(let threadTS):
            return try await api.postMessage(channel: address.channel, text: message.text, blocks: message.blocks, threadTS: threadTS)
        case .postEphemeral(let threadTS):
            _ = try await api.postEphemeral(channel: address.channel, user: address.user, text: message.text, blocks: message.blocks, threadTS: threadTS)
            return nil
        }
    }

    /// Puts `reply` in place of the ephemeral message that holds its button (the last part of
    /// the earlier private result). Only the click's `response_url` can edit an ephemeral
    /// message; without a usable one the note is skipped — the result itself was delivered.
    private func replaceEphemeral(with reply: Reply, address: SlackAddress, responseURL: String?) async throws(SlackAPIError) -> DeliveryOutcome {
        let situation = SlackRoute.Situation(address: address, part: 0, canPost: canPost, now: clock.now)
        guard situation.responseURLUsable, let message = SlackReplyRenderer.render(reply).last else { return .sent(platformRef: nil) }
        _ = try await send(message, via: .responseURL(.ephemeral, replaceOriginal: true), address: address, responseURL: responseURL)
        return .sent(platformRef: nil)
    }

    /// A private result leaves the public progress line saying where the result went. Best
    /// effort: the result is delivered; a stale progress line is only cosmetic.
    private func tidyProgress(_ ts: String, address: SlackAddress) async {
        do throws(SlackAPIError) {
            _ = try await api.update(channel: address.channel, ts: ts, text: "Finished — the result was sent privately to the person who asked.", blocks: nil)
        } catch {
            logger.notice("slack: could not tidy the progress message", metadata: ["reason": "\(error.reason)"])
        }
    }
}

/// One way a message can reach Slack, and the order they are tried in for each part of a reply.
///
/// A part goes by the first route of its list that Slack accepts: a route Slack refuses by name
/// (`message_not_found`, `cant_update_message`, `not_in_channel`, `used_url`, `expired_url`…)
/// hands the part to the next one, so a public result is lost only when every route is refused.
/// A passing failure (429, 5xx, a timeout) stops there: the outbox retries the same part later.
enum SlackRoute: Sendable, Hashable {
    /// `chat.update` of the run's progress message, which becomes the result's first part.
    case editProgress(ts: String)
    /// The slash command's or button's `response_url`.
    case responseURL(SlackResponseType, replaceOriginal: Bool)
    /// `chat.postMessage`, in `threadTS` when given.
    case postMessage(threadTS: String?)
    /// `chat.postEphemeral` to the person who asked.
    case postEphemeral(threadTS: String?)

    /// What the sender knows when it picks the routes of one part.
    struct Situation: Sendable {
        var address: SlackAddress
        /// Which part (from 0) is to go.
        var part: Int
        /// The message id the entry's earlier parts recorded (the first part's), if any.
        var firstPartTS: String? = nil
        /// The run's progress message, when there is one to edit.
        var progressTS: String? = nil
        /// A bot token is configured, so `chat.*` methods work.
        var canPost: Bool
        var now: Date

        /// Whether a post to the `response_url` replaces what an earlier post to it left: only a
        /// slash command's first part (a resend after a crash then shows once). A button's
        /// `response_url` would replace the message holding the button; later parts must add.
        var replacesAtResponseURL: Bool {
            part == 0 && address.answersSlashCommand == true
        }

        /// Whether a post to the `response_url` can still succeed: there is one, it has not
        /// expired, and this entry has not used Slack's 5 posts. Every part that goes there is one
        /// use; parts past the fifth go by the bot token.
        var responseURLUsable: Bool {
            guard address.sealedResponseURL != nil, part < SlackAddress.responseURLUses else { return false }
            guard let expiry = address.responseURLExpiresAt else { return true }
            return now < expiry
        }
    }

    /// The routes for a public part, best first.
    ///
    /// The first part replaces the progress message when there is one, else goes to the
    /// `response_url`, else by `chat.postMessage`. Later parts follow the first: into the
    /// progress message's thread when it was edited, beside it when it was posted, through the
    /// `response_url` when it went there — each with the others as fallbacks.
    static func forPublicPart(_ situation: Situation) -> [SlackRoute] {
        let address = situation.address
        let responseURL: [SlackRoute] =
            situation.responseURLUsable ? [.responseURL(.inChannel, replaceOriginal: situation.replacesAtResponseURL)] : []
        var post: [SlackRoute] = situation.canPost ? [.postMessage(threadTS: address.threadTS)] : []
        if situation.part == 0 {
            let edit: [SlackRoute] = situation.progressTS.map { [.editProgress(ts: $0)] } ?? []
            return edit + responseURL + post
        }
        guard let first = situation.firstPartTS else { return responseURL + post }
        if first == situation.progressTS, situation.canPost {
            post = [.postMessage(threadTS: address.threadTS ?? first)]
        }
        return post + responseURL
    }

    /// The routes for a private part: the `response_url` as ephemeral, else `chat.postEphemeral`.
    static func forPrivatePart(_ situation: Situation) -> [SlackRoute] {
        (situation.responseURLUsable ? [.responseURL(.ephemeral, replaceOriginal: situation.replacesAtResponseURL)] : [])
            + (situation.canPost ? [.postEphemeral(threadTS: situation.address.threadTS)] : [])
    }
}

/// Where a Slack reply goes, as stored in the outbox (`OutboxEntry.address`, JSON).
public struct SlackAddress: Sendable, Hashable, Codable {
    public var team: String
    public var channel: String
    /// Who asked: private results go only to them.
    public var user: String
    /// The thread to answer in (mentions, reactions, DMs in a thread).
    public var threadTS: String?
    /// The `response_url` of a slash command or button, sealed with `SlackSecretBox`.
    public var sealedResponseURL: String?
    /// When Slack stops taking posts to the `response_url` (30 minutes after it was issued);
    /// after it, replies go by the bot token instead of meeting `expired_url`.
    public var responseURLExpiresAt: Date?
    /// The `response_url` is a slash command's (not a button's): its answer's first part
    /// replaces whatever an earlier post to it left (`replace_original`), so a resend after a
    /// crash shows once. Nil (absent) for every other route.
    public var answersSlashCommand: Bool?

    /// How long Slack accepts posts to a `response_url`.
    public static let responseURLLifetime: Duration = .seconds(30 * 60)
    /// How many posts Slack accepts to one `response_url`.
    public static let responseURLUses = 5

    public init(
        team: String, channel: String, user: String, threadTS: String? = nil, sealedResponseURL: String? = nil, responseURLExpiresAt: Date? = nil,
        answersSlashCommand: Bool? = nil
    ) {
        self.team = team
        self.channel = channel
        self.user = user
        self.threadTS = threadTS
        self.sealedResponseURL = sealedResponseURL
        self.responseURLExpiresAt = responseURLExpiresAt
        self.answersSlashCommand = answersSlashCommand
    }

    /// The outbox's ordering and pacing key. Web API posts to one channel are paced and ordered
    /// together (Slack's per-channel limit); answers through a `response_url` (slash commands,
    /// buttons) are ordered per person, so one user's slow chain never holds up another's reply.
    public var conversation: String {
        sealedResponseURL == nil ? "slack:\(team):\(channel)" : "slack:\(team):\(channel):\(user)"
    }

    public var route: ReplyRoute {
        let json = (try? JSONEncoder.sorted.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ReplyRoute(platform: SlackEventMapping.platform, conversation: conversation, address: json)
    }

    public static func decode(_ address: String) -> SlackAddress? {
        try? JSONDecoder().decode(SlackAddress.self, from: Data(address.utf8))
    }
}

extension JSONEncoder {
    fileprivate static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
