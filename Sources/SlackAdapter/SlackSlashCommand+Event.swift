import Foundation
public import RelayCore

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
