import Foundation
public import Logging
public import RelayCore
public import RelayPipeline

/// What the adapter does with each verified activity: turn it into an `Event` and a
/// `TeamsAddress` and hand it to the relay's inbox. Never waits for a model.
///
/// - A message that mentions the bot in a channel or group chat (Teams sends the bot no other),
///   or any message in a personal chat, runs its command: `@Rhea translate fr …`, and in a
///   personal chat `translate fr …` or `/translate fr …` too; `/word …` is taken as a command
///   whatever the word (a custom command, or a typo answered with "did you mean"); other words
///   are fact-checked
///   (`/tribunal`). The bot's `<at>` mention is taken out of the text.
/// - A card's button ("Run again", "Post to channel") comes back as a message whose `value` is
///   the button's data.
/// - The message action "Fact-check with Rhea" (an `invoke`, `composeExtension/submitAction`,
///   command `factCheck`) runs a tribunal on the message it was run on, in its thread.
/// - A deleted message (`messageDelete`) withdraws its command.
///
/// The tenant (`Event.team`) is the Teams team for a channel, the group chat for a group chat,
/// and the person in a personal chat (`dm:<user>`). The dedupe key is the activity id, so an
/// activity the Bot Connector sends again runs once.
public struct TeamsInbound: Sendable {
    /// The message action's command id, as the app manifest declares it.
    public static let factCheckCommand = "factCheck"

    let inbox: any RelayInbox
    let logger: Logger

    public init(inbox: any RelayInbox, logger: Logger) {
        self.inbox = inbox
        self.logger = logger
    }

    /// What the route answers the Bot Connector.
    public enum Answer: Sendable, Hashable {
        /// 200, with this body (an invoke's answer, `{}` otherwise).
        case ok(JSONValue)
        /// An invoke the bot does not handle: HTTP 501, as the Bot Framework's own bots answer.
        case unhandledInvoke(String)
        /// An activity type the Bot Framework does not define: 400.
        case badRequest(String)
    }

    /// Activity types Teams sends that the relay takes and does nothing with.
    static let ignoredTypes: Set<String> = [
        "conversationUpdate", "installationUpdate", "typing", "messageReaction", "messageUpdate", "endOfConversation", "event", "contactRelationUpdate",
        "deleteUserData", "suggestion", "trace", "handoff", "command", "commandResult",
    ]

    public func activity(_ activity: TeamsActivity) async -> Answer {
        switch activity.type {
        case "message":
            if let value = activity.value, value.rhea != nil {
                await button(value, activity: activity)
            } else {
                await message(activity)
            }
            return .ok([:])
        case "invoke":
            return await invoke(activity)
        case "messageDelete":
            if let id = activity.id {
                do {
                    try await inbox.withdraw(platform: TeamsPlatform.name, message: id)
                } catch {
                    logger.error("teams: could not withdraw a deleted message's command", metadata: ["error": "\(error)"])
                }
            }
            return .ok([:])
        case let type where Self.ignoredTypes.contains(type):
            return .ok([:])
        default:
            return .badRequest("activity type `\(Self.shown(activity.type))` is not one Rhea Relay handles")
        }
    }

    // MARK: Messages

    func message(_ activity: TeamsActivity) async {
        guard let line = Self.commandLine(activity) else { return }
        await submit(event(activity, text: line, sourceMessage: activity.id), address: address(activity, replyTo: activity.id))
    }

    /// The command line a message asks for, or nil when it is not for the relay.
    static func commandLine(_ activity: TeamsActivity) -> String? {
        let bot = activity.recipient?.id
        let mentioned = activity.entities?.contains { $0.type == "mention" && $0.mentioned?.id == bot && bot != nil } ?? false
        guard mentioned || activity.isPersonal else { return nil }
        let rest = TeamsText.withoutMentions(of: bot, in: activity.text ?? "", entities: activity.entities ?? [])
        if rest.isEmpty { return activity.isPersonal ? nil : "/help" }
        return CommandTable.lineAfterMention(rest)
    }

    // MARK: Buttons

    func button(_ value: TeamsActionValue, activity: TeamsActivity) async {
        switch value.rhea {
        case "runAgain":
            guard let line = value.line, !line.isEmpty else { return }
            await submit(event(activity, text: line, sourceMessage: nil), address: address(activity, replyTo: activity.replyToID ?? activity.id))
        case "postToChannel":
            guard let entryID = value.entry else { return }
            await postToChannel(entryID: entryID, activity: activity)
        default:
            logger.notice("teams: a card's button the relay did not make", metadata: ["button": "\(Self.shown(value.rhea ?? ""))"])
        }
    }

    /// Posts an earlier private result for everyone, once (`PostToChannel`), in the conversation
    /// it was asked in; the private original says it was posted.
    func postToChannel(entryID: String, activity: TeamsActivity) async {
        let here = address(activity, replyTo: activity.replyToID)
        do {
            let outcome = try await PostToChannel.post(entryID: entryID, platform: TeamsPlatform.name, clicker: activity.from.id, inbox: inbox) { entry in
                TeamsAddress.decode(entry.address).map { PostToChannel.Original(asker: $0.user, publicRoute: $0.route, noteRoute: $0.route) }
            }
            if let answer = outcome.answer { try await inbox.post(answer, route: here.route) }
        } catch {
            logger.error("teams: could not queue a post to channel", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Invokes

    func invoke(_ activity: TeamsActivity) async -> Answer {
        guard activity.name == "composeExtension/submitAction", let value = activity.value, value.commandID == Self.factCheckCommand else {
            return .unhandledInvoke("invoke `\(Self.shown(activity.name ?? ""))` is not one Rhea Relay handles")
        }
        let claim = TeamsText.plain(fromHTML: value.messagePayload?.body?.content ?? "")
        guard !claim.isEmpty else {
            return .ok(Self.messageActionAnswer("That message has no text to fact-check."))
        }
        var event = event(activity, text: "/tribunal", sourceMessage: nil)
        event.repliedTo = claim
        // In the thread of the message it was run on.
        await submit(event, address: address(activity, replyTo: value.messagePayload?.id ?? activity.replyToID))
        return .ok([:])
    }

    /// A message action's answer that shows `text` to the person who ran it.
    static func messageActionAnswer(_ text: String) -> JSONValue {
        ["composeExtension": ["type": "message", "text": .string(text)]]
    }

    // MARK: Details

    func event(_ activity: TeamsActivity, text: String, sourceMessage: String?) -> Event {
        let conversation = activity.conversation.id
        // A channel's thread is `19:…@thread.tacv2;messageid=<root>`: the channel, and the thread.
        let parts = conversation.split(separator: ";", maxSplits: 1)
        let thread = parts.count == 2 && parts[1].hasPrefix("messageid=") ? String(parts[1].dropFirst("messageid=".count)) : nil
        return Event(
            platform: TeamsPlatform.name, team: Self.tenant(of: activity), channel: activity.channelData?.channel?.id ?? String(parts[0]),
            thread: thread, user: activity.from.aadObjectID ?? activity.from.id, userName: activity.from.name, text: text,
            eventKey: activity.id.map { "activity:\($0)" }, sourceMessage: sourceMessage)
    }

    func address(_ activity: TeamsActivity, replyTo: String?) -> TeamsAddress {
        TeamsAddress(
            team: Self.tenant(of: activity), serviceURL: activity.serviceURL, conversation: activity.conversation.id, replyTo: replyTo,
            user: activity.from.id, tenant: activity.tenantID, bot: activity.recipient?.id, isPersonal: activity.isPersonal)
    }

    /// The team for a channel, the chat for a group chat, the person in a personal chat.
    static func tenant(of activity: TeamsActivity) -> String {
        if activity.isPersonal { return "dm:\(activity.from.aadObjectID ?? activity.from.id)" }
        if let team = activity.channelData?.team?.id { return team }
        return "chat:\(activity.conversation.id.split(separator: ";").first.map(String.init) ?? activity.conversation.id)"
    }

    /// A name from a payload as an answer or a log shows it: letters, digits and `/ _ - .`,
    /// 64 at most, so a sender cannot put arbitrary text there.
    static func shown(_ name: String) -> String {
        String(
            String.UnicodeScalarView(
                name.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "/_-.".unicodeScalars.contains($0)) }
                    .prefix(64)))
    }

    /// Submits `event`; a refusal for being one too many is answered at once.
    private func submit(_ event: Event, address: TeamsAddress) async {
        do {
            let submission = try await inbox.submit(event, route: address.route)
            if let busy = submission.busyMessage { try? await inbox.post(.error(busy), route: address.route) }
        } catch {
            logger.error("teams: could not accept an activity", metadata: ["error": "\(error)"])
            try? await inbox.post(
                .error("Rhea Relay could not accept this just now (it could not store it). Nothing was run; please send it again."), route: address.route)
        }
    }
}
