import Foundation
public import Logging
public import RelayCore
public import RelayPipeline
public import RelayPlatform

/// What the adapter does with each inbound payload: turn it into an `Event` and a
/// `MattermostAddress`, and hand it to the relay's inbox. Never waits for a model.
///
/// The tenant (`Event.team`) is the Mattermost team: each team of a Mattermost server keeps its
/// own chains, commands and settings, as each Slack workspace does. A direct message belongs to
/// no team: its tenant is its person (`dm:<user id>`).
public struct MattermostInbound: Sendable {
    let inbox: any RelayInbox
    let api: any MattermostAPI
    let box: OutboxSecretBox
    let configuration: MattermostConfiguration
    let clock: any RelayClock
    let logger: Logger

    public init(
        inbox: any RelayInbox, api: any MattermostAPI, box: OutboxSecretBox, configuration: MattermostConfiguration, clock: any RelayClock = SystemClock(),
        logger: Logger
    ) {
        self.inbox = inbox
        self.api = api
        self.box = box
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
    }

    /// What the person sees when their command's `response_url` is refused and no bot can
    /// post the answer instead.
    static let foreignResponseURL =
        "Rhea Relay cannot answer this command: its answer was asked for at an address that is not this relay's Mattermost server. Nothing was run. (An admin can check that MATTERMOST_URL is the server's Site URL.)"

    /// A slash command: accepted into the inbox, answered later. Returns the acknowledgement:
    /// "⏳ Working on it…" once stored, or why not (busy, the store failed, an address to answer
    /// at that is refused), ephemeral.
    ///
    /// Anyone who holds a command's token can write any `response_url` in the form, so it is
    /// kept only as `MattermostConfiguration.responseURLRule` allows (rebuilt from its checked
    /// parts). A refused one is logged with why; the answer then goes by the bot (REST), or,
    /// without the bot, the command is refused before anything runs.
    public func slashCommand(_ command: MattermostSlashCommand) async -> JSONValue {
        var responseURL: String?
        if let given = command.responseURL {
            do throws(CallbackRefusal) {
                responseURL = try configuration.responseURLRule.check(given)
            } catch {
                logger.warning(
                    "mattermost: refused a slash command's response_url",
                    metadata: ["reason": "\(error.reason)", "then": "\(configuration.botEnabled ? "answered by the bot" : "the command is refused")"])
                guard configuration.botEnabled else { return MattermostCommandResponse.refused(Self.foreignResponseURL) }
            }
        }
        let sealed = responseURL.map(box.seal)
        let address = MattermostAddress(
            team: command.teamID, channel: command.channelID, user: command.userID, sealedResponseURL: sealed,
            responseURLExpiresAt: sealed == nil ? nil : clock.now + MattermostAddress.responseURLLifetime)
        let refusal: String
        do {
            let submission = try await inbox.submit(command.relayEvent(), route: address.route)
            guard let busy = submission.busyMessage else { return MattermostCommandResponse.workingOnIt() }
            refusal = busy
        } catch {
            logger.error("mattermost: could not accept a slash command", metadata: ["error": "\(error)"])
            refusal = "Rhea Relay could not accept this command just now (it could not store it). Nothing was run; please send it again."
        }
        return MattermostCommandResponse.refused(refusal)
    }

    /// A websocket event, from the connection that holds the lease. `bot` is the bot account.
    public func socketEvent(_ event: MattermostSocketEvent, bot: MattermostUser) async {
        do {
            switch event {
            case .posted(let post, let channelType, let teamID):
                try await posted(post, channelType: channelType, teamID: teamID, bot: bot)
            case .reactionAdded(let reaction):
                try await reactionAdded(reaction, bot: bot)
            case .postDeleted(let postID):
                try await inbox.withdraw(platform: MattermostPlatform.name, message: postID)
            }
        } catch {
            logger.error("mattermost: could not accept a websocket event", metadata: ["error": "\(error)"])
        }
    }

    /// A post mentioning the bot (or any post in a direct message with it) runs its command in
    /// the post's thread; an audio attachment goes with it as the event's voice note (its words
    /// are fetched only if the command needs them). The bot's own posts, other integrations' and
    /// system messages are ignored. The dedupe key is the post id, so a post seen twice (a
    /// reconnect) runs once.
    func posted(_ post: MattermostPost, channelType: String, teamID: String, bot: MattermostUser) async throws {
        guard post.userID != bot.id, post.type.isEmpty, !post.fromIntegration else { return }
        let isDirect = channelType == "D"
        let voice = post.voice(origin: .own)
        guard
            let line = Self.commandLine(
                post.message, botUsername: bot.username, isDirect: isDirect, inThread: !post.rootID.isEmpty, hasVoice: voice != nil)
        else { return }
        let team = isDirect || teamID.isEmpty ? "dm:\(post.userID)" : teamID
        let event = Event(
            platform: MattermostPlatform.name, team: team, channel: post.channelID, thread: post.threadRoot, user: post.userID, text: line,
            eventKey: "post:\(post.id)", voice: voice, sourceMessage: post.id)
        let address = MattermostAddress(team: team, channel: post.channelID, user: post.userID, rootID: post.threadRoot)
        try await submit(event, address: address)
    }

    /// The command line a post asks for, or nil when it is not for the relay.
    ///
    /// `@bot translate fr hi` runs that command, as does `@bot /word …` for any word (a custom
    /// command, or a typo answered with "did you mean": `CommandTable.lineAfterMention`);
    /// `@bot` with other words fact-checks them;
    /// `@bot` alone in a thread fact-checks the thread (the relay reads it). In a direct message
    /// the mention is optional, and a leading `/` is kept. With an audio attachment (`hasVoice`),
    /// `@bot` alone, or nothing typed in a direct message, is "" — what `/settings voice` asks for.
    static func commandLine(_ message: String, botUsername: String, isDirect: Bool, inThread: Bool, hasVoice: Bool = false) -> String? {
        let mention = "@" + botUsername.lowercased()
        let words = message.split(whereSeparator: \.isWhitespace)
        let mentioned = !botUsername.isEmpty && words.contains { Self.isMention($0, of: mention) }
        guard mentioned || isDirect else { return nil }
        let rest = words.filter { !Self.isMention($0, of: mention) }.joined(separator: " ")
        if rest.isEmpty { return hasVoice ? "" : inThread ? "/tribunal" : (isDirect ? nil : "/help") }
        return CommandTable.lineAfterMention(rest)
    }

    /// `@rhea`, `@rhea,` or `@rhea:` (any case).
    private static func isMention(_ word: Substring, of mention: String) -> Bool {
        var word = word.lowercased()
        while let last = word.last, [",", ":", ".", "!", "?"].contains(last) { word.removeLast() }
        return word == mention
    }

    /// 🔍 on a post runs a tribunal on it, in its thread; 👍/👎 on one of the relay's own
    /// fact-checks marks the ledger for whoever reacted.
    func reactionAdded(_ reaction: MattermostReaction, bot: MattermostUser) async throws {
        guard reaction.userID != bot.id else { return }
        let mark = Self.marks(reaction.emojiName)
        guard reaction.emojiName == configuration.tribunalReaction || mark != nil else { return }
        let post: MattermostPost
        do throws(MattermostAPIError) {
            post = try await api.post(id: reaction.postID)
        } catch {
            logger.warning("mattermost: could not read the post a reaction was put on", metadata: ["reason": "\(error.reason)"])
            return
        }
        let key = "reaction:\(reaction.postID):\(reaction.userID):\(reaction.emojiName):\(reaction.createAt)"
        let team = await teamOf(channel: post.channelID, fallbackUser: reaction.userID)
        let address = MattermostAddress(team: team, channel: post.channelID, user: reaction.userID, rootID: post.threadRoot)
        if reaction.emojiName == configuration.tribunalReaction {
            let claim = post.userID == bot.id ? MattermostMarkdown.unescape(post.message) : post.message
            let event = Event(
                platform: MattermostPlatform.name, team: team, channel: post.channelID, thread: post.threadRoot, user: reaction.userID, text: "/tribunal",
                repliedTo: claim.trimmingCharacters(in: .whitespacesAndNewlines), eventKey: key)
            try await submit(event, address: address)
        } else if let right = mark, post.userID == bot.id, let id = LedgerReference.id(in: MattermostMarkdown.unescape(post.message)) {
            let event = Event(
                platform: MattermostPlatform.name, team: team, channel: post.channelID, thread: post.threadRoot, user: reaction.userID,
                text: LedgerReference.markCommand(id, right: right), eventKey: key)
            try await submit(event, address: address)
        }
    }

    /// The tenant of a reaction's channel, which its event does not name (`GET /channels/{id}`):
    /// its team, or the person for a direct or group message (no team).
    private func teamOf(channel: String, fallbackUser: String) async -> String {
        do throws(MattermostAPIError) {
            return try await api.channelTeam(channel) ?? "dm:\(fallbackUser)"
        } catch {
            logger.warning("mattermost: could not read a channel's team", metadata: ["reason": "\(error.reason)"])
            return "dm:\(fallbackUser)"
        }
    }

    /// 👍 (`+1`, `thumbsup`) → right, 👎 (`-1`, `thumbsdown`) → wrong; nil for other emoji.
    static func marks(_ emoji: String) -> Bool? {
        switch emoji {
        case "+1", "thumbsup": true
        case "-1", "thumbsdown": false
        default: nil
        }
    }

    /// Submits `event`; a refusal for being one too many is answered at once.
    private func submit(_ event: Event, address: MattermostAddress) async throws {
        let submission = try await inbox.submit(event, route: address.route)
        if let busy = submission.busyMessage { try? await inbox.post(.error(busy), route: address.route) }
    }
}
