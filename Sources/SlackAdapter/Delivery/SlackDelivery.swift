import Foundation
import RelayCore
import RelayPipeline
import RelayPlatform

/// Slack's delivery primitives, for `Deliverer` (platform "slack").
///
/// - Progress and the placeholder: `chat.postMessage`, then `chat.update` (needs the bot token;
///   without it no progress is shown — the result still arrives).
/// - New messages go by `SlackRoute`: a slash command's or button's `response_url` (in the
///   channel, or ephemeral for a private reply), `chat.postMessage`, `chat.postEphemeral`. A
///   `response_url` takes at most 5 parts and nothing after it expired.
/// - A private reply to a private one (the note that a result was posted to the channel)
///   replaces the ephemeral message holding the button, through the click's `response_url`.
/// - Slack answers 429/`ratelimited`, 5xx, `channel_not_found`… become the outbox's outcomes
///   (retry no sooner than `Retry-After`, backoff, give up).
struct SlackDelivery: DeliveryPlatform {
    typealias Failure = SlackAPIError

    typealias Place = Audience

    let platform = SlackEventMapping.platform
    /// Slack allows about one `chat.*` message a second per channel.
    let webAPIInterval: Duration
    let api: any SlackWebAPI
    /// A bot token is configured, so `chat.*` methods work.
    let canPost: Bool
    let box: SlackSecretBox
    let clock: any RelayClock
    /// Edits of answers being written, per workspace (`admitsPartialEdit`).
    let partialEdits = EditBudget(perMinute: 30, burst: 10)

    init(api: any SlackWebAPI, canPost: Bool, box: SlackSecretBox, webAPIInterval: Duration = .seconds(1), clock: any RelayClock = SystemClock()) {
        self.api = api
        self.canPost = canPost
        self.box = box
        self.webAPIInterval = webAPIInterval
        self.clock = clock
    }

    // MARK: Limits

    /// The first part of a reply that goes to a `response_url` (a slash command's answer) is not
    /// paced: the per-channel limit is `chat.postMessage`'s. Nor is an edit of the run's
    /// placeholder (`chat.update`, a Tier 3 method, limited per workspace, not per channel), so
    /// the first text of an answer being written shows as soon as the model sends it, not a
    /// second after the placeholder. Everything else waits its turn in the channel, later parts
    /// of a reply included.
    func minimumInterval(for entry: OutboxEntry) -> Duration {
        if canPost, entry.replaces != nil, entry.partsDelivered == 0 { return .zero }
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
    var limitsCountPerBot: Bool { false }

    /// Where the answer would go by `chat.postMessage` (mentions, DMs, reactions, buttons), which
    /// has no idempotency key: with the bot token, the run posts a placeholder and the answer is
    /// its `chat.update`. A slash command's answer needs none: its first part goes to the
    /// command's `response_url` with `replace_original`, so a resend replaces what the first
    /// send posted. Without the bot token nothing can be posted or edited: the answer goes as it
    /// can.
    func answersByEditingPlaceholder(at address: String) -> Bool {
        guard canPost, let address = SlackAddress.decode(address) else { return false }
        return !(address.answersSlashCommand == true && address.sealedResponseURL != nil)
    }

    /// `chat.update` is a Tier 3 method: 50+ a minute per workspace, with bursts (api.slack.com,
    /// "Rate limits"). An answer being written into the run's placeholder is shown every 2 s at
    /// most, 20 times at most.
    ///
    /// A slash command's answer is written at its `response_url` instead (`partialRoute`), each
    /// post replacing the last (`replace_original`: a resend after a crash shows once). Slack takes
    /// 5 posts there, so twice at most, 3 s apart: the whole answer and a run again after a crash
    /// (two more) still fit. Without a bot token and without a `response_url` nothing can be
    /// edited: the answer arrives whole.
    func streaming(at address: String) -> StreamingPace {
        guard let address = SlackAddress.decode(address) else { return .none }
        if address.answersSlashCommand == true, address.sealedResponseURL != nil {
            return StreamingPace(interval: .seconds(3), maxEdits: 2)
        }
        return canPost ? StreamingPace(interval: .seconds(2), maxEdits: 20) : .none
    }

    /// `chat.update` counts per workspace: answers written at once in one workspace share 30
    /// edits a minute (bursts of 10), which leaves the rest of Tier 3's 50+ for the edits that
    /// carry whole answers and a chain's progress.
    func admitsPartialEdit(at address: String, now: Date) -> Bool {
        partialEdits.take(SlackAddress.decode(address)?.team ?? "", now: now)
    }

    // MARK: Primitives

    func decode(_ address: String) -> SlackAddress? { SlackAddress.decode(address) }

    func render(_ reply: Reply, entryID: String, address: SlackAddress) -> [SlackMessage] {
        SlackReplyRenderer.render(reply, postToChannelID: reply.isPrivate ? entryID : nil)
    }

    func render(_ progress: RunProgress) -> SlackMessage { SlackReplyRenderer.render(progress) }

    /// With a block of its own: `chat.update` with text alone would leave the progress
    /// message's blocks showing.
    func render(note: String) -> SlackMessage {
        SlackMessage(text: SlackMrkdwn.escape(note), blocks: [SlackBlocks.section(SlackMrkdwn.escape(note))])
    }

    func place(of reply: Reply, address: SlackAddress) -> Place { reply.isPrivate ? .asker : .channel }

    /// A private reply goes only by ephemeral routes (`SlackRoute.forPrivatePart`).
    func reachesAskerAlone(_ reply: Reply, address: SlackAddress) async -> Bool { reply.isPrivate }

    func placeholder(address: SlackAddress, earlier: OutboxEntry?) -> Placeholder<Place>? {
        guard canPost, let ts = earlier?.platformRef else { return nil }
        return Placeholder(ref: ts, place: .channel)
    }

    func progressRoute(address: SlackAddress) -> SlackRoute? {
        canPost ? .postMessage(threadTS: address.threadTS) : nil
    }

    /// A slash command's answer being written goes to its `response_url`, replacing what was
    /// there, while Slack still takes posts there; else as progress goes.
    func partialRoute(address: SlackAddress) -> SlackRoute? {
        let situation = situation(address, part: 0)
        if address.answersSlashCommand == true, situation.responseURLUsable { return .responseURL(.inChannel, replaceOriginal: true) }
        return progressRoute(address: address)
    }

    func routes(for part: PartToSend<SlackAddress, Place>) -> [PartRoute<SlackRoute>] {
        let situation = situation(part.address, part: part.index, firstPartTS: part.firstPartRef, progressTS: part.placeholder?.ref)
        let routes = part.reply.isPrivate ? SlackRoute.forPrivatePart(situation) : SlackRoute.forPublicPart(situation)
        return routes.map { .post($0) }
    }

    /// Only the click's `response_url` can edit an ephemeral message; without a usable one the
    /// note is skipped — the result itself was delivered.
    func buttonMessage(address: SlackAddress) -> ButtonMessage<SlackRoute> {
        situation(address, part: 0).responseURLUsable ? .replace(via: .responseURL(.ephemeral, replaceOriginal: true)) : .unreachable
    }

    /// One message by one route; the posted message's `ts` when it has one that can be edited.
    func post(_ message: SlackMessage, via route: SlackRoute, address: SlackAddress, key: SendKey) async throws(SlackAPIError) -> String? {
        switch route {
        case .responseURL(let type, let replaceOriginal):
            guard let responseURL = address.sealedResponseURL.flatMap(box.open) else {
                throw .invalidRequest(endpoint: "response_url", reason: "the response_url cannot be unsealed")
            }
            try await api.respond(to: responseURL, body: message.responseURLBody(type, replaceOriginal: replaceOriginal))
            return nil
        case .postMessage(let threadTS):
            return try await api.postMessage(channel: address.channel, text: message.text, blocks: message.blocks, threadTS: threadTS)
        case .postEphemeral(let threadTS):
            _ = try await api.postEphemeral(channel: address.channel, user: address.user, text: message.text, blocks: message.blocks, threadTS: threadTS)
            return nil
        }
    }

    func edit(_ placeholder: Placeholder<Place>, to message: SlackMessage, address: SlackAddress, key: SendKey) async throws(SlackAPIError) {
        _ = try await api.update(channel: address.channel, ts: placeholder.ref, text: message.text, blocks: message.blocks)
    }

    func unreachable(address: SlackAddress) -> String {
        "no way to reach Slack: SLACK_BOT_TOKEN is not set and there is no usable response_url"
    }

    private func situation(_ address: SlackAddress, part: Int, firstPartTS: String? = nil, progressTS: String? = nil) -> SlackRoute.Situation {
        SlackRoute.Situation(
            address: address, part: part, firstPartTS: firstPartTS, progressTS: canPost ? progressTS : nil, canPost: canPost, now: clock.now)
    }
}
