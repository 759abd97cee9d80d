import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayPlatform

/// Teams' delivery primitives, for `Deliverer` (platform "teams"), through the Bot Connector.
///
/// - A reply is a new activity in the command's conversation, replying to the command's
///   message (so a channel's answer stays in its thread); a run's progress is one such message,
///   updated in place (`PUT …/activities/{id}`), and the answer replaces it.
/// - Teams has no message only one person sees: a private reply to a command in a channel or
///   group chat goes to the asker's personal chat with the bot (`POST /v3/conversations`, made
///   once and remembered), with "Post to channel"; the channel's progress message says where it
///   went. In a personal chat everything stays there.
/// - The Bot Connector deduplicates nothing, so an answer sent as a new message and sent again
///   after a crash would show twice: the answer edits the run's placeholder instead.
/// - 429 waits `Retry-After`; 412, 5xx and timeouts are retried (`PlatformCallError`).
struct TeamsDelivery: DeliveryPlatform {
    typealias Failure = TeamsAPIError
    typealias Place = Audience

    enum Route: Sendable, Hashable {
        /// A new message in the command's conversation, replying to its message.
        case reply
        /// A new message in the asker's personal chat with the bot.
        case personal
    }

    let platform = TeamsPlatform.name
    let connector: TeamsConnector
    let logger: Logger
    let partialEdits = EditBudget(perMinute: 30 * 60, burst: 30)

    /// Teams allows a bot 7 messages a second, 8 in 2 s and 60 in 30 s in one conversation
    /// (thread): four a second keeps under the first two, so a placeholder and its answer go
    /// 250 ms apart; a conversation busier than 60 in 30 s gets the connector's 429, whose
    /// `Retry-After` the outbox waits. (Measured: at 500 ms, every quick answer came half a
    /// second after its placeholder, slack-bench --platform teams' p50 519 ms.)
    func minimumInterval(for entry: OutboxEntry) -> Duration { .milliseconds(250) }

    /// Always: see the type's documentation.
    func answersByEditingPlaceholder(at address: String) -> Bool { true }

    /// Every 2 s at most, 20 times at most: 15 updates in 30 s, a quarter of the conversation's 60.
    func streaming(at address: String) -> StreamingPace { StreamingPace(interval: .seconds(2), maxEdits: 20) }

    /// Teams counts 50 requests a second per bot across a tenant: answers written at once share
    /// 30 edits a second, so placeholders and whole answers keep the rest.
    func admitsPartialEdit(at address: String, now: Date) -> Bool { partialEdits.take(now: now) }

    // MARK: Primitives

    func decode(_ address: String) -> TeamsAddress? { TeamsAddress.decode(address) }

    /// "Post to channel" only where the answer went somewhere other than the conversation.
    func render(_ reply: Reply, entryID: String, address: TeamsAddress) -> [TeamsMessage] {
        var shown = reply
        if place(of: reply, address: address) == .channel { shown.actions = shown.actions.filter { $0 != .postToChannel } }
        return TeamsRenderer.render(shown, entryID: entryID)
    }

    func render(_ progress: RunProgress) -> TeamsMessage { TeamsRenderer.render(progress) }

    func render(note: String) -> TeamsMessage { TeamsRenderer.render(note: note) }

    func place(of reply: Reply, address: TeamsAddress) -> Audience { reply.isPrivate && !address.isPersonal ? .asker : .channel }

    /// A private reply goes to the asker's personal chat; one that stays private never falls back to the channel.
    func reachesAskerAlone(_ reply: Reply, address: TeamsAddress) async -> Bool { reply.isPrivate || address.isPersonal }

    /// The message the earlier entry left, where it went.
    func placeholder(address: TeamsAddress, earlier: OutboxEntry?) -> Placeholder<Audience>? {
        guard let ref = earlier?.platformRef.flatMap(TeamsMessageRef.decode) else { return nil }
        let inConversation = ref.conversation == address.conversation
        return Placeholder(ref: ref.encoded, place: inConversation ? .channel : .asker, isPublic: inConversation)
    }

    func progressRoute(address: TeamsAddress) -> Route? { .reply }

    /// A result meant for the asker goes only to their personal chat; an error or help may go
    /// to the conversation when that chat cannot be reached (it says only what they typed wrong).
    func routes(for part: PartToSend<TeamsAddress, Audience>) -> [PartRoute<Route>] {
        guard part.place == .asker else { return [.post(.reply)] }
        return part.reply.staysPrivate ? [.post(.personal)] : [.post(.personal), .post(.reply)]
    }

    func post(_ message: TeamsMessage, via route: Route, address: TeamsAddress, key: SendKey) async throws(TeamsAPIError) -> String? {
        switch route {
        case .reply:
            let id = try await connector.send(message.activity(), serviceURL: address.serviceURL, conversation: address.conversation, replyTo: address.replyTo)
            return id.map { TeamsMessageRef(conversation: address.conversation, activity: $0).encoded }
        case .personal:
            let chat = try await personalChat(address)
            let id = try await connector.send(message.activity(), serviceURL: address.serviceURL, conversation: chat, replyTo: nil)
            return id.map { TeamsMessageRef(conversation: chat, activity: $0).encoded }
        }
    }

    func edit(_ placeholder: Placeholder<Audience>, to message: TeamsMessage, address: TeamsAddress, key: SendKey) async throws(TeamsAPIError) {
        guard let ref = TeamsMessageRef.decode(placeholder.ref) else {
            throw .invalidRequest(endpoint: "update activity", reason: "the stored message reference is not one the relay wrote")
        }
        try await connector.update(message.activity(id: ref.activity), serviceURL: address.serviceURL, conversation: ref.conversation, activityID: ref.activity)
    }

    func unreachable(address: TeamsAddress) -> String { "no way to reach Teams" }

    /// "…is typing" in the command's conversation; Teams ends it by itself after a few seconds
    /// or at the bot's next message.
    func typing(at address: TeamsAddress, _ on: Bool) async {
        guard on else { return }
        _ = try? await connector.send(["type": "typing"], serviceURL: address.serviceURL, conversation: address.conversation, replyTo: nil)
    }

    // MARK: Details

    private func personalChat(_ address: TeamsAddress) async throws(TeamsAPIError) -> String {
        if let known = connector.personalChats[address.user] { return known }
        let id = try await connector.personalConversation(serviceURL: address.serviceURL, user: address.user, tenant: address.tenant, bot: address.bot)
        connector.personalChats[address.user] = id
        return id
    }
}
