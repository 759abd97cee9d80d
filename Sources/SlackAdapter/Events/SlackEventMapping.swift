import Foundation
public import RelayCore

/// How Slack payloads become relay `Event`s.
public enum SlackEventMapping {
    /// `Event.platform` for everything from Slack.
    public static let platform = "slack"
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
                text: SlackIncomingText.normalizeMention(message.text, botUserID: botUserID), eventKey: eventID)
        case .directMessage(let message):
            return Event(
                platform: SlackEventMapping.platform, team: teamID, channel: message.channel, thread: message.threadTS,
                user: message.user, text: directMessageText(message.text), eventKey: eventID)
        case .reactionAdded, .ignored:
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
            userName: userName, text: commandLine(catchAll: catchAll), eventKey: triggerID.map { "trigger:" + $0 })
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
