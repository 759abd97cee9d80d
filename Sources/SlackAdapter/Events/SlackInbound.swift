import Foundation
public import Logging
public import RelayCore
public import RelayPipeline
public import RelayPlatform

/// What the adapter does with each inbound payload, whether it came over HTTP or Socket Mode:
/// turn it into an `Event` and a `SlackAddress`, and hand it to the relay's inbox. Never waits
/// for a model: callers acknowledge Slack right after.
public struct SlackInbound: Sendable {
    let inbox: any RelayInbox
    let api: any SlackWebAPI
    let box: SlackSecretBox
    let configuration: SlackConfiguration
    let clock: any RelayClock
    let logger: Logger

    public init(
        inbox: any RelayInbox, api: any SlackWebAPI, box: SlackSecretBox, configuration: SlackConfiguration, clock: any RelayClock = SystemClock(),
        logger: Logger
    ) {
        self.inbox = inbox
        self.api = api
        self.box = box
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
    }

    /// A `response_url` sealed for the outbox, and when Slack stops taking posts to it.
    private func sealed(_ responseURL: String?) -> (sealed: String?, expiresAt: Date?) {
        guard let responseURL else { return (nil, nil) }
        return (box.seal(responseURL), clock.now + SlackAddress.responseURLLifetime)
    }

    /// What the person sees when their command's `response_url` is refused and there is no
    /// bot token to answer with instead.
    static let foreignResponseURL =
        "Rhea Relay cannot answer this command: its answer was asked for at an address that is not Slack's. Nothing was run."

    /// `url` as `SlackConfiguration.responseURLRule` lets it be called (rebuilt from its checked
    /// parts), or nil when there is none or it is refused: anyone who can sign a request can
    /// write any address there. A refusal is logged with why and what happens `then`.
    private func allowed(_ url: String?, of payload: String, then: String) -> (url: String?, refused: Bool) {
        guard let url else { return (nil, false) }
        do throws(CallbackRefusal) {
            return (try configuration.responseURLRule.check(url), false)
        } catch {
            logger.warning("slack: refused a \(payload)'s response_url", metadata: ["reason": "\(error.reason)", "then": "\(then)"])
            return (nil, true)
        }
    }

    /// The event with its tenant and whether its user is a guest from another organisation.
    ///
    /// The tenant is the configured `SLACK_TEAM_ID`, else the team the payload was delivered for.
    /// The user is a guest when Slack names their own workspace (`user_team`, `user.team_id`, a
    /// slash command's `team_id`) and it is neither the tenant nor the tenant's enterprise org.
    func tenanted(_ event: Event, payloadTeam: String, userTeam: String?, enterpriseID: String? = nil) -> Event {
        var event = event
        let tenant = configuration.teamID ?? payloadTeam
        event.team = tenant
        if let userTeam, !userTeam.isEmpty, userTeam != tenant, userTeam != enterpriseID {
            event.isExternal = true
        }
        return event
    }

    /// A slash command: accepted into the inbox, then answered through its `response_url`
    /// (sealed in the outbox). Returns the acknowledgement's text: "Working on it…" once the
    /// command is stored, or why it was not — busy, or the store failed — so the person knows at
    /// once. Over Socket Mode, where the envelope was acknowledged already (`acknowledged`), that
    /// answer is posted as a reply instead.
    ///
    /// A `response_url` the rule refuses is dropped: the answer goes with the bot token, or,
    /// without one, the command is refused before anything runs (over Socket Mode nothing can
    /// tell the person, so only the log says why).
    @discardableResult
    public func slashCommand(_ command: SlackSlashCommand, acknowledged: Bool = false) async -> JSONValue {
        let canPost = configuration.botToken != nil
        let checked = allowed(command.responseURL, of: "slash command", then: canPost ? "answered with the bot token" : "the command is refused")
        if checked.refused, !canPost { return SlackAck.refused(Self.foreignResponseURL) }
        let responseURL = sealed(checked.url)
        let address = SlackAddress(
            team: command.teamID, channel: command.channelID, user: command.userID, sealedResponseURL: responseURL.sealed,
            responseURLExpiresAt: responseURL.expiresAt, answersSlashCommand: true)
        let event = tenanted(command.relayEvent(), payloadTeam: command.teamID, userTeam: command.teamID, enterpriseID: command.enterpriseID)
        let refusal: String
        do {
            let submission = try await inbox.submit(event, route: address.route)
            guard let busy = submission.busyMessage else { return SlackAck.workingOnIt() }
            refusal = busy
        } catch {
            logger.error("slack: could not accept a slash command", metadata: ["error": "\(error)"])
            refusal = "Rhea Relay could not accept this command just now (it could not store it). Nothing was run; please send it again."
        }
        if acknowledged { try? await inbox.post(.error(refusal), route: address.route) }
        return SlackAck.refused(refusal)
    }

    /// Tells the person in the conversation that their command was refused as one too many.
    private func answerBusy(_ submission: Submission, route: ReplyRoute) async {
        guard let busy = submission.busyMessage else { return }
        try? await inbox.post(.error(busy), route: route)
    }

    /// Mentions and DMs run their command in the thread; the tribunal reaction runs `/tribunal`
    /// on the message reacted to. Slack's retries carry the same `event_id`, which the relay
    /// deduplicates, so a retried event never gets a second reply. Throws when the event could
    /// not be stored: the HTTP route then answers 500, and Slack delivers the event again.
    public func eventCallback(_ callback: SlackEventCallback) async throws {
        switch callback.event {
        case .mention, .directMessage:
            guard let mapped = callback.relayEvent() else { return }
            let event = tenanted(mapped, payloadTeam: callback.teamID, userTeam: callback.userTeamID, enterpriseID: callback.enterpriseID)
            let address = SlackAddress(team: event.team, channel: event.channel, user: event.user, threadTS: event.thread)
            await answerBusy(try await inbox.submit(event, route: address.route), route: address.route)
        case .reactionAdded(let reaction):
            // The reacted-to message's text needs one Web API call: made off the request path.
            if reaction.isReaction(configuration.tribunalReaction) {
                Task { await tribunalOnReaction(reaction, callback: callback) }
            } else if let right = Self.marks(reaction), reaction.itemUser == nil || callback.botUserID == nil || reaction.itemUser == callback.botUserID {
                // A 👍 or 👎 on one of the relay's own replies: only those name a fact-check.
                Task { await markOnReaction(reaction, right: right, callback: callback) }
            }
        case .deleted(let channel, let ts):
            try await inbox.withdraw(platform: SlackEventMapping.platform, message: SlackEventMapping.sourceMessage(channel: channel, ts: ts))
        case .ignored:
            return
        }
    }

    private func tribunalOnReaction(_ reaction: SlackReactionEvent, callback: SlackEventCallback) async {
        do throws(SlackAPIError) {
            let message = try await api.message(channel: reaction.channel, ts: reaction.messageTS)
            let event = tenanted(
                reaction.relayEvent(team: callback.teamID, eventID: callback.eventID, messageText: message.text, messageThreadTS: message.threadTS),
                payloadTeam: callback.teamID, userTeam: callback.userTeamID, enterpriseID: callback.enterpriseID)
            let address = SlackAddress(team: event.team, channel: event.channel, user: event.user, threadTS: event.thread)
            do {
                await answerBusy(try await inbox.submit(event, route: address.route), route: address.route)
            } catch {
                logger.error("slack: could not accept a tribunal reaction", metadata: ["error": "\(error)"])
            }
        } catch {
            logger.warning("slack: could not read the message a tribunal reaction was put on", metadata: ["reason": "\(error.reason)"])
        }
    }

    /// Whether a reaction says a fact-check's verdict was right (👍) or wrong (👎); nil for others.
    static func marks(_ reaction: SlackReactionEvent) -> Bool? {
        if reaction.isReaction("+1") || reaction.isReaction("thumbsup") { return true }
        if reaction.isReaction("-1") || reaction.isReaction("thumbsdown") { return false }
        return nil
    }

    /// `/ledger mark N right|wrong` from whoever reacted, when the message names fact-check N;
    /// answered to them alone.
    private func markOnReaction(_ reaction: SlackReactionEvent, right: Bool, callback: SlackEventCallback) async {
        do throws(SlackAPIError) {
            let message = try await api.message(channel: reaction.channel, ts: reaction.messageTS)
            guard let id = LedgerReference.id(in: SlackIncomingText.normalize(message.text)) else { return }
            let event = tenanted(
                Event(
                    platform: SlackEventMapping.platform, team: callback.teamID, channel: reaction.channel, thread: message.threadTS ?? reaction.messageTS,
                    user: reaction.user, text: LedgerReference.markCommand(id, right: right), eventKey: callback.eventID),
                payloadTeam: callback.teamID, userTeam: callback.userTeamID, enterpriseID: callback.enterpriseID)
            let address = SlackAddress(team: event.team, channel: event.channel, user: event.user, threadTS: event.thread)
            do {
                await answerBusy(try await inbox.submit(event, route: address.route), route: address.route)
            } catch {
                logger.error("slack: could not accept a fact-check mark", metadata: ["error": "\(error)"])
            }
        } catch {
            logger.warning("slack: could not read the message a mark was put on", metadata: ["reason": "\(error.reason)"])
        }
    }

    /// Buttons: "Post to channel" posts an earlier private result for everyone; "Run again"
    /// runs the command line again where the button is. Throws when a run could not be stored
    /// (the HTTP route answers 500, which Slack shows the person as a failed action). A
    /// `response_url` the rule refuses is dropped (logged): the answer goes with the bot token.
    public func interaction(_ interaction: SlackInteraction) async throws {
        guard case .blockActions(let actions) = interaction, let channel = actions.channelID else { return }
        let checked = allowed(
            actions.responseURL, of: "button", then: configuration.botToken != nil ? "answered with the bot token" : "its answer cannot be shown")
        let responseURL = sealed(checked.url)
        let address = SlackAddress(
            team: actions.teamID, channel: channel, user: actions.userID, threadTS: actions.threadTS, sealedResponseURL: responseURL.sealed,
            responseURLExpiresAt: responseURL.expiresAt)
        for button in actions.buttons {
            switch button {
            case .postToChannel(let id):
                await postToChannel(entryID: id, address: address)
            case .runAgain(let commandLine):
                guard let mapped = actions.relayEvent(runAgain: commandLine) else { continue }
                let event = tenanted(mapped, payloadTeam: actions.teamID, userTeam: actions.userTeamID)
                await answerBusy(try await inbox.submit(event, route: address.route), route: address.route)
            case .other:
                continue
            }
        }
    }

    /// Posts an earlier private result for everyone, once: the post is queued under a key made
    /// from the result's id, so a second click, a double click or a replayed request posts
    /// nothing more (and says so). The ephemeral original is then replaced by the same result,
    /// without its button, saying it was posted.
    private func postToChannel(entryID: String, address: SlackAddress) async {
        do {
            guard let entry = try await inbox.outboxEntry(id: entryID), case .reply(let original) = entry.content, original.isPrivate,
                let originalAddress = SlackAddress.decode(entry.address), originalAddress.user == address.user
            else {
                try await inbox.post(.error("That result is no longer available to post; run the command again."), route: address.route)
                return
            }
            var reply = original
            reply.isPrivate = false
            reply.actions = reply.actions.filter { $0 != .postToChannel }
            // Into the channel (or thread) where it was asked, for everyone.
            var target = address
            target.threadTS = originalAddress.threadTS ?? address.threadTS
            guard try await inbox.post(reply, route: target.route, onceAs: "\(entryID):posted", replacing: nil) else {
                try await inbox.post(.info("This result was already posted to the channel."), route: address.route)
                return
            }
            var note = original
            note.actions = reply.actions
            note.notes.append("You posted this to the channel.")
            try await inbox.post(note, route: address.route, onceAs: "\(entryID):posted-note", replacing: entryID)
        } catch {
            logger.error("slack: could not queue a post to channel", metadata: ["error": "\(error)"])
        }
    }
}

/// How Slack payloads become relay `Event`s.
public enum SlackEventMapping {
    /// `Event.platform` for everything from Slack.
    public static let platform = "slack"

    /// A message's `Event.sourceMessage`: its channel and `ts` (a `ts` is unique per channel).
    public static func sourceMessage(channel: String, ts: String) -> String { "\(channel)/\(ts)" }
}

extension SlackEventCallback {
    /// The relay event for a mention or a direct message; nil for a reaction (its event needs
    /// the text of the message reacted to; see `SlackReactionEvent.relayEvent`) and for ignored
    /// events.
    ///
    /// A mention is answered in its thread (`thread_ts`, or the mention itself when it started
    /// none), with the leading `@bot` removed; a direct message is answered where it was written.
    /// Either way the text is plain (see `SlackIncomingText`).
    public func relayEvent() -> Event? {
        switch event {
        case .mention(let message):
            return Event(
                platform: SlackEventMapping.platform, team: teamID, channel: message.channel,
                thread: message.threadTS ?? message.ts, user: message.user,
                text: SlackIncomingText.normalizeMention(message.text, botUserID: botUserID), eventKey: eventID, voice: message.voice,
                sourceMessage: SlackEventMapping.sourceMessage(channel: message.channel, ts: message.ts),
                mentions: SlackIncomingText.mentions(in: message.text))
        case .directMessage(let message):
            return Event(
                platform: SlackEventMapping.platform, team: teamID, channel: message.channel, thread: message.threadTS,
                user: message.user, text: directMessageText(message.text), eventKey: eventID, voice: message.voice,
                sourceMessage: SlackEventMapping.sourceMessage(channel: message.channel, ts: message.ts),
                mentions: SlackIncomingText.mentions(in: message.text))
        case .reactionAdded, .deleted, .ignored:
            return nil
        }
    }

    /// A DM needs no mention, so only the bot's own is dropped, and only when the bot is known:
    /// `<@U123> is right` in a DM is about someone else.
    private func directMessageText(_ text: String) -> String {
        guard let botUserID else { return SlackIncomingText.normalize(text).trimmingCharacters(in: .whitespacesAndNewlines) }
        return SlackIncomingText.normalizeMention(text, botUserID: botUserID)
    }
}

extension SlackReactionEvent {
    /// The relay event for a tribunal reaction: `/tribunal` on the message reacted to, answered
    /// in that message's thread.
    ///
    /// - Parameters:
    ///   - team: the callback's `teamID`.
    ///   - eventID: the callback's `eventID`, the dedupe key.
    ///   - messageText: the reacted-to message's text as Slack returns it (markup and escapes
    ///     are normalised here).
    ///   - messageThreadTS: that message's `thread_ts`, when it is a reply in a thread: the
    ///     answer goes to the thread, not under the reply.
    public func relayEvent(team: String, eventID: String?, messageText: String, messageThreadTS: String? = nil) -> Event {
        Event(
            platform: SlackEventMapping.platform, team: team, channel: channel, thread: messageThreadTS ?? messageTS,
            user: user, text: "/tribunal", repliedTo: SlackIncomingText.normalize(messageText).trimmingCharacters(in: .whitespacesAndNewlines),
            eventKey: eventID)
    }
}

extension SlackSlashCommand {
    /// The catch-all command that takes any command line (`/rhea translate fr hi`).
    public static let catchAllCommand = "/rhea"

    /// The relay command line this invocation stands for.
    ///
    /// `/translate` with text `fr hi` is `/translate fr hi`. The catch-all stands for its text
    /// alone (`/rhea translate fr hi` is `/translate fr hi`, the slash added when left out), so
    /// "Run again" and history show what was meant; `/rhea` with no text stays `/rhea`, which the
    /// parser answers with help. Slack markup in the text is turned into plain text first.
    public func commandLine(catchAll: String = catchAllCommand) -> String {
        let typed = SlackIncomingText.normalize(text).trimmingCharacters(in: .whitespacesAndNewlines)
        let name = command.hasPrefix("/") ? command : "/" + command
        if name.lowercased() == catchAll.lowercased(), !typed.isEmpty {
            return typed.hasPrefix("/") ? typed : "/" + typed
        }
        return typed.isEmpty ? name : name + " " + typed
    }

    /// The platform-neutral event for the relay.
    ///
    /// The dedupe key is the `trigger_id` (Slack does not retry slash commands over HTTP, but a
    /// Socket Mode envelope acknowledged late is delivered again with the same payload).
    public func relayEvent(catchAll: String = catchAllCommand) -> Event {
        Event(
            platform: SlackEventMapping.platform, team: teamID, channel: channelID, user: userID,
            userName: userName, text: commandLine(catchAll: catchAll), eventKey: triggerID.map { "trigger:" + $0 },
            mentions: SlackIncomingText.mentions(in: text))
    }
}

extension SlackBlockActions {
    /// The relay event for "Run again": the command line, run as if the user typed it again
    /// where the button is (in its thread, if any).
    ///
    /// Nil when the button is outside a conversation. The dedupe key is the `trigger_id`, new on
    /// every click, so a second click runs again while a redelivered envelope does not.
    public func relayEvent(runAgain commandLine: String) -> Event? {
        guard let channelID else { return nil }
        return Event(
            platform: SlackEventMapping.platform, team: teamID, channel: channelID, thread: threadTS, user: userID,
            userName: userName, text: commandLine, eventKey: triggerID.map { "trigger:" + $0 })
    }
}
