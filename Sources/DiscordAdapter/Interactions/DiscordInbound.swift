import Foundation
public import Logging
public import RelayCore
public import RelayPipeline
public import RelayPlatform

/// What the adapter does with each inbound interaction or gateway event: turn it into an
/// `Event` and a `DiscordAddress`, and hand it to the relay's inbox. Never waits for a model:
/// the interaction response (deferred) goes back at once, the answer follows through the outbox.
public struct DiscordInbound: Sendable {
    let inbox: any RelayInbox
    let api: any DiscordREST
    let box: DiscordSecretBox
    let configuration: DiscordConfiguration
    let clock: any RelayClock
    let logger: Logger

    public init(
        inbox: any RelayInbox, api: any DiscordREST, box: DiscordSecretBox, configuration: DiscordConfiguration, clock: any RelayClock = SystemClock(),
        logger: Logger
    ) {
        self.inbox = inbox
        self.api = api
        self.box = box
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
    }

    /// Interaction response types.
    enum Callback {
        static let pong = 1
        static let channelMessage = 4
        static let deferredChannelMessage = 5
        static let deferredUpdate = 6
    }

    /// `ADMINISTRATOR` and `MANAGE_GUILD`: who may change the team's chains, commands and settings.
    static let adminPermissions: UInt64 = (1 << 3) | (1 << 5)

    // MARK: - Interactions

    /// The immediate answer to a verified interaction (the body of the HTTP 200).
    public func interaction(_ interaction: DiscordInteraction) async -> JSONValue {
        switch interaction.kind {
        case .ping:
            return ["type": .int(Callback.pong)]
        case .applicationCommand:
            return await command(interaction)
        case .messageComponent:
            return await component(interaction)
        case .autocomplete:
            return ["type": 8, "data": ["choices": []]]
        case .modalSubmit:
            return Self.message("This form is not something Rhea Relay handles.")
        }
    }

    private func command(_ interaction: DiscordInteraction) async -> JSONValue {
        guard let invocation = interaction.command, let line = invocation.commandLine, let channel = interaction.channelID,
            let user = interaction.user
        else {
            return Self.message("Rhea Relay does not know this command; try /help.")
        }
        var event = self.event(interaction, user: user, channel: channel, text: line)
        if invocation.type == 3, invocation.name == DiscordCommands.summarizeThread {
            // "Summarize thread" on a message: that message is the text summarised.
            event.repliedTo = invocation.targetMessage?.content
        }
        if invocation.type == 3, invocation.name == DiscordCommands.transcribe {
            // "Transcribe" on a message: its voice message (or audio attachment) is heard.
            event.voice = invocation.targetMessage?.clip
        }
        let ephemeral = Self.isPrivate(line)
        let address = self.address(interaction, user: user, channel: channel, webhook: .original, ephemeral: ephemeral)
        do {
            let submission = try await inbox.submit(event, route: address.route)
            if let busy = submission.busyMessage { return Self.message(busy) }
            let deferred: JSONValue = ["type": .int(Callback.deferredChannelMessage)]
            return ephemeral ? ["type": .int(Callback.deferredChannelMessage), "data": ["flags": .int(DiscordMessage.ephemeralFlag)]] : deferred
        } catch {
            logger.error("discord: could not accept a command", metadata: ["error": "\(error)", "interaction": "\(interaction.id)"])
            return Self.message("Rhea Relay could not accept this command just now (it could not store it). Nothing was run; please send it again.")
        }
    }

    private func component(_ interaction: DiscordInteraction) async -> JSONValue {
        guard let component = interaction.component, let channel = interaction.channelID, let user = interaction.user else {
            return ["type": .int(Callback.deferredUpdate)]
        }
        switch component.button {
        case .postToChannel(let id):
            return await postToChannel(entryID: id, interaction: interaction, user: user, channel: channel)
        case .runAgain(let line):
            let event = self.event(interaction, user: user, channel: channel, text: line)
            let address = self.address(interaction, user: user, channel: channel, webhook: .followup, ephemeral: nil)
            do {
                let submission = try await inbox.submit(event, route: address.route)
                if let busy = submission.busyMessage { return Self.message(busy) }
                return ["type": .int(Callback.deferredUpdate)]
            } catch {
                logger.error("discord: could not accept a run again", metadata: ["error": "\(error)"])
                return Self.message("Rhea Relay could not accept this just now. Nothing was run; please try again.")
            }
        case .other:
            return ["type": .int(Callback.deferredUpdate)]
        }
    }

    /// Posts an earlier private result for everyone, once: only its asker may, and the post is
    /// queued under a key made from the result's id, so a second click or a replayed request
    /// posts nothing more (and says so). The private original is then replaced by the same
    /// result without its button, saying it was posted.
    private func postToChannel(entryID: String, interaction: DiscordInteraction, user: DiscordUser, channel: String) async -> JSONValue {
        do {
            guard let entry = try await inbox.outboxEntry(id: entryID), entry.platform == DiscordPlatform.name, case .reply(let original) = entry.content,
                original.isPrivate, let originalAddress = DiscordAddress.decode(entry.address)
            else {
                return Self.message("That result is no longer available to post; run the command again.")
            }
            guard originalAddress.user == user.id else {
                return Self.message("Only the person who asked can post this result to the channel.")
            }
            var reply = original
            reply.isPrivate = false
            reply.actions = reply.actions.filter { $0 != .postToChannel }
            // For everyone, through the click's webhook (a public follow-up), else the bot token.
            var target = address(interaction, user: user, channel: originalAddress.channel, webhook: .followup, ephemeral: false)
            target.team = originalAddress.team
            guard try await inbox.post(reply, route: target.route, onceAs: "\(entryID):posted", replacing: nil) else {
                return Self.message("This result was already posted to the channel.")
            }
            var note = original
            note.actions = reply.actions
            note.notes.append("You posted this to the channel.")
            let here = address(interaction, user: user, channel: channel, webhook: .original, ephemeral: true)
            try await inbox.post(note, route: here.route, onceAs: "\(entryID):posted-note", replacing: entryID)
            return ["type": .int(Callback.deferredUpdate)]
        } catch {
            logger.error("discord: could not queue a post to channel", metadata: ["error": "\(error)"])
            return Self.message("Rhea Relay could not post this just now; please try again.")
        }
    }

    /// The relay event for an interaction; the dedupe key is the interaction id.
    func event(_ interaction: DiscordInteraction, user: DiscordUser, channel: String, text: String) -> Event {
        // A direct message (no guild) is its person's own team.
        let admin = interaction.guildID == nil || (interaction.memberPermissions.flatMap { UInt64($0) }.map { $0 & Self.adminPermissions != 0 } ?? false)
        return Event(
            platform: DiscordPlatform.name, team: interaction.guildID ?? "dm:\(user.id)", channel: channel, user: user.id,
            userName: user.globalName ?? user.username, text: text, eventKey: "interaction:\(interaction.id)", isAdmin: admin)
    }

    /// Where an interaction's answers go: its webhook (the token sealed, with its expiry), and the
    /// channel for the bot token after it.
    func address(_ interaction: DiscordInteraction, user: DiscordUser, channel: String, webhook: DiscordAddress.Webhook, ephemeral: Bool?)
        -> DiscordAddress
    {
        DiscordAddress(
            team: interaction.guildID ?? "dm:\(user.id)", channel: channel, user: user.id, applicationID: interaction.applicationID,
            sealedToken: box.seal(interaction.token.secret), tokenExpiresAt: clock.now + DiscordAddress.tokenLifetime, webhook: webhook,
            ephemeral: ephemeral)
    }

    /// Whether the command line asks for a private answer (`--private` before any `--`).
    static func isPrivate(_ line: String) -> Bool {
        for word in line.split(whereSeparator: \.isWhitespace) {
            if word == "--" { return false }
            if word == "--private" { return true }
        }
        return false
    }

    /// An immediate ephemeral answer (type 4) that runs nothing.
    static func message(_ text: String) -> JSONValue {
        [
            "type": .int(Callback.channelMessage),
            "data": ["content": .string(DiscordMarkdown.escape(text)), "flags": .int(DiscordMessage.ephemeralFlag), "allowed_mentions": ["parse": []]],
        ]
    }

    // MARK: - Gateway

    /// A gateway dispatch: mentions of the bot and DMs run their command, answered as a reply;
    /// the tribunal reaction runs `/tribunal` on the message. `botUserID` is READY's. An event
    /// the relay acts on whose data does not decode is logged and counted, and dropped.
    public func dispatch(_ dispatch: GatewayDispatch, botUserID: String?) async {
        switch dispatch.event {
        case .messageCreate(let payload):
            guard let botUserID, let message = DiscordGatewayMessage(payload, botUserID: botUserID) else { return }
            await submit(message.event, address: message.address)
        case .reactionAdd(let reaction):
            await self.reaction(reaction, botUserID: botUserID)
        case .messageDelete(let deleted):
            do {
                try await inbox.withdraw(platform: DiscordPlatform.name, message: deleted.id)
            } catch {
                logger.error("could not withdraw the command of a deleted message; it may still be answered", metadata: ["error": "\(error)"])
            }
        case .undecodable(let problem):
            PayloadDecoding.dropped(problem, platform: DiscordPlatform.name, logger: logger)
        case .ready, .unread:
            return
        }
    }

    private func submit(_ event: Event, address: DiscordAddress) async {
        do {
            let submission = try await inbox.submit(event, route: address.route)
            if let busy = submission.busyMessage { try? await inbox.post(.error(busy), route: address.route) }
        } catch {
            logger.error("discord: could not accept a message", metadata: ["error": "\(error)"])
        }
    }

    /// A reaction someone else than a bot (this one included) put on a message.
    private func reaction(_ reaction: DiscordReactionPayload, botUserID: String?) async {
        guard let emoji = reaction.emoji, reaction.userID != botUserID, !reaction.byBot else { return }
        if let right = LedgerReference.mark(fromEmoji: emoji) {
            await markOnReaction(reaction, right: right, botUserID: botUserID)
            return
        }
        guard emoji == configuration.tribunalReaction else { return }
        let (user, channel, messageID) = (reaction.userID, reaction.channelID, reaction.messageID)
        let team = reaction.guildID ?? "dm:\(user)"
        do throws(DiscordAPIError) {
            let message = try await api.message(channelID: channel, messageID: messageID)
            let event = Event(
                platform: DiscordPlatform.name, team: team, channel: channel, user: user, text: "/tribunal", repliedTo: message.content,
                eventKey: "reaction:\(messageID):\(user)")
            await submit(event, address: DiscordAddress(team: team, channel: channel, user: user, replyTo: messageID))
        } catch {
            logger.warning("discord: could not read the message a tribunal reaction was put on", metadata: ["reason": "\(error.reason)"])
        }
    }

    /// `/ledger mark N right|wrong` from whoever reacted, when the relay's own reply names
    /// fact-check N (its embed footer).
    private func markOnReaction(_ reaction: DiscordReactionPayload, right: Bool, botUserID: String?) async {
        // Only the relay's own replies name a fact-check: a 👍 elsewhere costs no API call.
        guard let botUserID, reaction.messageAuthorID == botUserID else { return }
        let (user, channel, messageID) = (reaction.userID, reaction.channelID, reaction.messageID)
        let team = reaction.guildID ?? "dm:\(user)"
        do throws(DiscordAPIError) {
            let message = try await api.message(channelID: channel, messageID: messageID)
            guard let id = LedgerReference.id(in: message.content + "\n" + message.embedText) else { return }
            let event = Event(
                platform: DiscordPlatform.name, team: team, channel: channel, user: user, text: LedgerReference.markCommand(id, right: right),
                eventKey: "mark:\(messageID):\(user):\(right)")
            await submit(event, address: DiscordAddress(team: team, channel: channel, user: user, replyTo: messageID))
        } catch {
            logger.warning("discord: could not read the message a mark was put on", metadata: ["reason": "\(error.reason)"])
        }
    }
}

/// A MESSAGE_CREATE the relay answers: a mention of the bot in a server, or a DM.
struct DiscordGatewayMessage: Sendable {
    var event: Event
    var address: DiscordAddress

    /// Nil for messages of bots (itself included), and server messages that do not mention the bot.
    init?(_ message: DiscordMessagePayload, botUserID: String) {
        guard let channel = message.channelID, let author = message.author, !author.isBot, author.id != botUserID else { return nil }
        let user = author.id
        guard message.guildID == nil || message.mentionIDs.contains(botUserID) else { return nil }
        let text = Self.withoutMention(message.content, botUserID: botUserID)
        // A voice message (or an audio file): the message's own, else the one it replies to.
        // With no text, the relay runs the voice setting (`/transcribe` by default).
        let voice = message.clip(origin: .own) ?? message.referencedMessage?.clip(origin: .repliedTo)
        guard !text.isEmpty || voice != nil else { return nil }
        let team = message.guildID ?? "dm:\(user)"
        event = Event(
            platform: DiscordPlatform.name, team: team, channel: channel, user: user,
            userName: author.globalName ?? (author.username.isEmpty ? nil : author.username),
            text: text, repliedTo: message.referencedMessage?.content, eventKey: "message:\(message.id)", voice: voice, sourceMessage: message.id)
        address = DiscordAddress(team: team, channel: channel, user: user, replyTo: message.id)
    }

    /// The text after a leading `<@bot>` (or `<@!bot>`); other mentions stay.
    static func withoutMention(_ content: String, botUserID: String) -> String {
        var rest = Substring(content).drop(while: \.isWhitespace)
        for form in ["<@\(botUserID)>", "<@!\(botUserID)>"] where rest.hasPrefix(form) {
            rest = rest.dropFirst(form.count)
            break
        }
        return rest.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
