import Crypto
import Foundation
public import Logging
public import RelayCore
public import RelayPipeline
public import RelayPlatform

/// Delivers Mattermost's outbox entries.
///
/// - Progress: one post (`POST /posts`, in the thread), then edited (`PUT /posts/{id}/patch`);
///   needs the bot. Without it progress is skipped — the result still arrives.
/// - A reply goes one part (one post, at most 16 383 runes) per call, each by the first of its
///   `MattermostRoute`s that Mattermost accepts: a public result replaces the progress post when
///   there is one, else is posted by the bot (`POST /posts`, in the thread), else at the slash
///   command's `response_url` (`in_channel`); a private one goes to the `response_url` as
///   `ephemeral`, else as an ephemeral post (`POST /posts/ephemeral`). A route refused for good
///   passes the part to the next, so a result is lost only when every route is refused.
/// - 429s wait `X-Ratelimit-Reset`, 5xx and timeouts are retried (`PlatformCallError`).
/// - Every bot post carries a `pending_post_id` made from its entry and part, which Mattermost
///   deduplicates for 30 seconds: a post resent after a crash (Mattermost took it, the process
///   died before the outbox marked it) within them shows once. A `response_url` post has no such
///   key: without the bot, a resend shows twice.
public struct MattermostReplySender: ReplySender {
    public let platform = MattermostPlatform.name
    let api: any MattermostAPI
    let canPost: Bool
    let box: OutboxSecretBox
    let clock: any RelayClock
    let logger: Logger

    public init(api: any MattermostAPI, canPost: Bool, box: OutboxSecretBox, clock: any RelayClock = SystemClock(), logger: Logger) {
        self.api = api
        self.canPost = canPost
        self.box = box
        self.clock = clock
        self.logger = logger
    }

    /// No pacing between sends: Mattermost limits nothing per channel. Its limiter (off unless an
    /// admin turns it on; 10 a second with bursts of 100 by default) counts per user or address,
    /// that is per bot: its 429 holds the conversation back for `X-Ratelimit-Reset` seconds, the
    /// one rate-limit layer. (Measured: 100 ms between one channel's posts capped a closed loop
    /// of 32 users at 317 replies/s, with a p50 of 100 ms that was only that wait.)
    public func minimumInterval(for entry: OutboxEntry) -> Duration { .zero }

    public func deliver(_ entry: OutboxEntry, earlier: OutboxEntry?) async -> DeliveryOutcome {
        guard let address = MattermostAddress.decode(entry.address) else {
            return .rejected(reason: "the stored Mattermost address cannot be read")
        }
        let responseURL = address.sealedResponseURL.flatMap(box.open)
        do throws(MattermostAPIError) {
            switch entry.content {
            case .progress(let step):
                guard canPost else { return .sent(platformRef: nil) }
                let message = MattermostRenderer.render(step)
                if let id = earlier?.platformRef {
                    try await api.patchPost(id: id, message: message)
                    return .sent(platformRef: id)
                }
                return .sent(
                    platformRef: try await api.createPost(
                        channel: address.channel, message: message, rootID: address.rootID, pendingID: Self.pendingID(entry, part: 0)))
            case .reply(let reply):
                return await deliverPart(of: reply, entry: entry, address: address, responseURL: responseURL, progressID: earlier?.platformRef)
            case .parkedRun:
                return .rejected(reason: "a parked run is not a message")
            }
        } catch {
            return error.deliveryOutcome
        }
    }

    /// Sends part `entry.partsDelivered` of `reply`: `.partDelivered` while more remain, `.sent`
    /// after the last (with the first part's post id).
    private func deliverPart(of reply: Reply, entry: OutboxEntry, address: MattermostAddress, responseURL: String?, progressID: String?) async
        -> DeliveryOutcome
    {
        let messages = MattermostRenderer.render(reply)
        let part = entry.partsDelivered
        guard part < messages.count else { return .sent(platformRef: nil) }
        let situation = MattermostRoute.Situation(
            address: address, part: part, progressID: canPost ? progressID : nil, canPost: canPost, hasResponseURL: responseURL != nil, now: clock.now)
        let routes =
            reply.isPrivate ? MattermostRoute.forPrivatePart(situation, isResult: reply.kind == .result) : MattermostRoute.forPublicPart(situation)
        let outcome = await send(
            messages[part], routes: routes, address: address, responseURL: responseURL, pendingID: Self.pendingID(entry, part: part))
        guard case .sent(let id) = outcome else { return outcome }
        let isLast = part == messages.count - 1
        if isLast, reply.isPrivate, let progressID = situation.progressID { await tidyProgress(progressID) }
        if !isLast { return .partDelivered(platformRef: id) }
        return .sent(platformRef: part == 0 ? id : nil)
    }

    /// Tries `routes` in order until Mattermost accepts `message`: a refusal passes it on, a
    /// passing failure is returned for the outbox to retry.
    private func send(_ message: String, routes: [MattermostRoute], address: MattermostAddress, responseURL: String?, pendingID: String) async
        -> DeliveryOutcome
    {
        var refusals: [String] = []
        for route in routes {
            do throws(MattermostAPIError) {
                return .sent(platformRef: try await send(message, via: route, address: address, responseURL: responseURL, pendingID: pendingID))
            } catch {
                guard case .rejected(let reason) = error.deliveryOutcome else { return error.deliveryOutcome }
                refusals.append(reason)
                if route != routes.last { logger.notice("mattermost: a route refused a reply; trying the next one", metadata: ["reason": "\(reason)"]) }
            }
        }
        guard !refusals.isEmpty else {
            return .rejected(reason: "no way to reach Mattermost: no bot (MATTERMOST_URL, MATTERMOST_BOT_TOKEN) and no usable response_url")
        }
        return .rejected(reason: refusals.joined(separator: "; then "))
    }

    /// One post by one route; its id when it is one the bot can edit.
    private func send(_ message: String, via route: MattermostRoute, address: MattermostAddress, responseURL: String?, pendingID: String)
        async throws(MattermostAPIError) -> String?
    {
        switch route {
        case .editProgress(let id):
            try await api.patchPost(id: id, message: message)
            return id
        case .post:
            return try await api.createPost(channel: address.channel, message: message, rootID: address.rootID, pendingID: pendingID)
        case .ephemeralPost:
            try await api.createEphemeralPost(user: address.user, channel: address.channel, message: message, rootID: address.rootID)
            return nil
        case .responseURL(let type):
            guard let responseURL else { throw .invalidRequest(endpoint: "response_url", reason: "the response_url cannot be unsealed") }
            try await api.respond(to: responseURL, body: MattermostCommandResponse.body(type, text: message))
            return nil
        }
    }

    /// The `pending_post_id` of one part of one entry: the same for every try, 26 characters
    /// (a Mattermost id's length) of the SHA-256 of both, so no stored id's shape reaches it.
    static func pendingID(_ entry: OutboxEntry, part: Int) -> String {
        let digest = SHA256.hash(data: Data("\(entry.id):\(part)".utf8))
        return "rr" + digest.map { String(format: "%02x", $0) }.joined().prefix(24)
    }

    /// A private result leaves the public progress post saying where the result went. Best
    /// effort: the result is delivered; a stale progress line is only cosmetic.
    private func tidyProgress(_ id: String) async {
        do throws(MattermostAPIError) {
            try await api.patchPost(id: id, message: "Finished — the result was sent privately to the person who asked.")
        } catch {
            logger.notice("mattermost: could not tidy the progress post", metadata: ["reason": "\(error.reason)"])
        }
    }
}

/// One way a post can reach Mattermost, and the order they are tried in for each part.
enum MattermostRoute: Sendable, Hashable {
    /// `PUT /posts/{id}/patch` of the run's progress post, which becomes the result's first part.
    case editProgress(id: String)
    /// `POST /posts` by the bot, in the address's thread.
    case post
    /// `POST /posts/ephemeral` to the person who asked.
    case ephemeralPost
    /// The slash command's `response_url`.
    case responseURL(MattermostCommandResponse.ResponseType)

    struct Situation: Sendable {
        var address: MattermostAddress
        var part: Int
        var progressID: String?
        var canPost: Bool
        var hasResponseURL: Bool
        var now: Date

        /// A `response_url` that can still take this part: there is one, it has not expired, and
        /// this reply has not used Mattermost's 5 posts.
        var responseURLUsable: Bool {
            guard hasResponseURL, address.sealedResponseURL != nil, part < MattermostAddress.responseURLUses else { return false }
            guard let expiry = address.responseURLExpiresAt else { return true }
            return now < expiry
        }
    }

    /// A public part: the progress post edited (first part), the bot's post, the `response_url`.
    static func forPublicPart(_ situation: Situation) -> [MattermostRoute] {
        let edit: [MattermostRoute] = situation.part == 0 ? situation.progressID.map { [.editProgress(id: $0)] } ?? [] : []
        return edit + (situation.canPost ? [.post] : []) + (situation.responseURLUsable ? [.responseURL(.inChannel)] : [])
    }

    /// A private part: the `response_url` as ephemeral (it needs no permission), else an
    /// ephemeral post by the bot (which needs `create_post_ephemeral`, by default a system
    /// admin's). An error or help that neither takes (a mention's, where the bot lacks the
    /// permission) is posted in the thread instead: it says only what was typed wrong, and is
    /// better seen than lost. A private *result* never is.
    static func forPrivatePart(_ situation: Situation, isResult: Bool) -> [MattermostRoute] {
        (situation.responseURLUsable ? [.responseURL(.ephemeral)] : []) + (situation.canPost ? [.ephemeralPost] : [])
            + (situation.canPost && !isResult ? [.post] : [])
    }
}

/// A slash command's response: the immediate answer and what is POSTed to its `response_url`.
public enum MattermostCommandResponse {
    public enum ResponseType: String, Sendable, Hashable {
        /// Only the person who ran the command sees it.
        case ephemeral
        /// Everyone in the channel.
        case inChannel = "in_channel"
    }

    /// `{"response_type","text","skip_slack_parsing":true}`; `text` is escaped Markdown already.
    /// Slack parsing is skipped so no `<url|text>` or `<!channel>` is ever translated.
    public static func body(_ type: ResponseType, text: String) -> JSONValue {
        ["response_type": .string(type.rawValue), "text": .string(text), "skip_slack_parsing": true]
    }

    /// The acknowledgement while the answer is computed: ephemeral, so the channel is not disturbed.
    public static func workingOnIt() -> JSONValue {
        body(.ephemeral, text: "⏳ Working on it…")
    }

    /// The acknowledgement when the command was not accepted (busy, or the store failed).
    public static func refused(_ text: String) -> JSONValue {
        body(.ephemeral, text: MattermostMarkdown.escape(text))
    }
}
