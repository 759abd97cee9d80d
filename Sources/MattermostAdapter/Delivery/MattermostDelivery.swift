import Crypto
import Foundation
import RelayCore
import RelayPipeline
import RelayPlatform

/// Mattermost's delivery primitives, for `Deliverer` (platform "mattermost").
///
/// - Progress: one post (`POST /posts`, in the thread), then edited (`PUT /posts/{id}/patch`);
///   needs the bot. Without it no progress is shown — the result still arrives.
/// - New posts (at most 16 383 runes each) go by `MattermostRoute`: the bot's post
///   (`POST /posts`, in the thread), the slash command's `response_url` (`in_channel`, or
///   `ephemeral` for a private reply), an ephemeral post (`POST /posts/ephemeral`).
/// - 429s wait `X-Ratelimit-Reset`, 5xx and timeouts are retried (`PlatformCallError`).
/// - Every bot post carries a `pending_post_id` made from its entry and part, which Mattermost
///   deduplicates for 30 seconds: a post resent after a crash (Mattermost took it, the process
///   died before the outbox marked it) within them shows once. A `response_url` post has no such
///   key: without the bot, a resend shows twice.
struct MattermostDelivery: DeliveryPlatform {
    typealias Failure = MattermostAPIError

    typealias Place = Audience

    let platform = MattermostPlatform.name
    let api: any MattermostAPI
    let canPost: Bool
    let box: OutboxSecretBox
    let clock: any RelayClock
    let partialEdits = EditBudget(perMinute: 5 * 60, burst: 20)

    /// No pacing between sends: Mattermost limits nothing per channel. Its limiter (off unless an
    /// admin turns it on; 10 a second with bursts of 100 by default) counts per user or address,
    /// that is per bot: its 429 holds the conversation back for `X-Ratelimit-Reset` seconds, the
    /// one rate-limit layer. (Measured: 100 ms between one channel's posts capped a closed loop
    /// of 32 users at 317 replies/s, with a p50 of 100 ms that was only that wait.)
    func minimumInterval(for entry: OutboxEntry) -> Duration { .zero }

    /// Mattermost's limiter counts per user (10 a second with bursts of 100 when an admin turns
    /// it on): once a second at most, 30 times at most.
    func streaming(at address: String) -> StreamingPace { StreamingPace(interval: .seconds(1), maxEdits: 30) }

    /// Mattermost's limiter, when an admin turns it on, counts per user (the bot): 10 requests a
    /// second with bursts of 100. Answers written at once share 5 edits a second.
    func admitsPartialEdit(at address: String, now: Date) -> Bool { partialEdits.take(now: now) }

    // MARK: Primitives

    func decode(_ address: String) -> MattermostAddress? { MattermostAddress.decode(address) }

    func render(_ reply: Reply, entryID: String, address: MattermostAddress) -> [String] { MattermostRenderer.render(reply) }

    func render(_ progress: RunProgress) -> String { MattermostRenderer.render(progress) }

    func render(note: String) -> String { MattermostMarkdown.escape(note) }

    func place(of reply: Reply, address: MattermostAddress) -> Place { reply.isPrivate ? .asker : .channel }

    /// A private reply goes as an ephemeral post; one that stays private never falls back to the thread.
    func reachesAskerAlone(_ reply: Reply, address: MattermostAddress) async -> Bool { reply.isPrivate }

    func placeholder(address: MattermostAddress, earlier: OutboxEntry?) -> Placeholder<Place>? {
        guard canPost, let id = earlier?.platformRef else { return nil }
        return Placeholder(ref: id, place: .channel)
    }

    func progressRoute(address: MattermostAddress) -> MattermostRoute? { canPost ? .post : nil }

    func routes(for part: PartToSend<MattermostAddress, Place>) -> [PartRoute<MattermostRoute>] {
        let situation = MattermostRoute.Situation(
            address: part.address, part: part.index, canPost: canPost, hasResponseURL: responseURL(part.address) != nil, now: clock.now)
        let routes =
            part.reply.isPrivate
            ? MattermostRoute.forPrivatePart(situation, staysPrivate: part.reply.staysPrivate) : MattermostRoute.forPublicPart(situation)
        return routes.map { .post($0) }
    }

    /// One post by one route; its id when it is one the bot can edit.
    func post(_ message: String, via route: MattermostRoute, address: MattermostAddress, key: SendKey) async throws(MattermostAPIError) -> String? {
        switch route {
        case .post:
            return try await api.createPost(channel: address.channel, message: message, rootID: address.rootID, pendingID: Self.pendingID(key))
        case .ephemeralPost:
            try await api.createEphemeralPost(user: address.user, channel: address.channel, message: message, rootID: address.rootID)
            return nil
        case .responseURL(let type):
            guard let responseURL = responseURL(address) else {
                throw .invalidRequest(endpoint: "response_url", reason: "the response_url cannot be unsealed")
            }
            try await api.respond(to: responseURL, body: MattermostCommandResponse.body(type, text: message))
            return nil
        }
    }

    func edit(_ placeholder: Placeholder<Place>, to message: String, address: MattermostAddress, key: SendKey) async throws(MattermostAPIError) {
        try await api.patchPost(id: placeholder.ref, message: message)
    }

    func unreachable(address: MattermostAddress) -> String {
        "no way to reach Mattermost: no bot (MATTERMOST_URL, MATTERMOST_BOT_TOKEN) and no usable response_url"
    }

    // MARK: Details

    private func responseURL(_ address: MattermostAddress) -> String? { address.sealedResponseURL.flatMap(box.open) }

    /// The `pending_post_id` of one send of one entry: the same for every try, 26 characters
    /// (a Mattermost id's length) of the SHA-256 of both, so no stored id's shape reaches it.
    static func pendingID(_ key: SendKey) -> String {
        let digest = SHA256.hash(data: Data("\(key.entryID):\(key.step)".utf8))
        return "rr" + digest.map { String(format: "%02x", $0) }.joined().prefix(24)
    }
}
