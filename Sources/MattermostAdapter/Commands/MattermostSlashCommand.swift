import Foundation
public import RelayCore

/// A custom slash command as Mattermost POSTs it (`application/x-www-form-urlencoded`):
/// `channel_id`, `channel_name`, `command`, `response_url`, `team_domain`, `team_id`, `text`,
/// `token`, `trigger_id`, `user_id`, `user_name` and the mention lists, which are not read.
public struct MattermostSlashCommand: Sendable, Hashable {
    public var teamID: String
    public var channelID: String
    public var userID: String
    public var userName: String?
    /// The command as typed, with its slash (`/translate`).
    public var command: String
    public var text: String
    /// Where up to five answers may be POSTed within 30 minutes; a credential, never logged.
    public var responseURL: String?
    /// Unique per invocation: the dedupe key.
    public var triggerID: String?

    public init(
        teamID: String, channelID: String, userID: String, userName: String? = nil, command: String, text: String, responseURL: String? = nil,
        triggerID: String? = nil
    ) {
        self.teamID = teamID
        self.channelID = channelID
        self.userID = userID
        self.userName = userName
        self.command = command
        self.text = text
        self.responseURL = responseURL
        self.triggerID = triggerID
    }

    /// The catch-all command that takes any command line (`/rhea translate fr hi`).
    public static let catchAllCommand = "/rhea"

    /// Decodes a form already parsed into its fields; says which required field is missing.
    public init(form fields: [String: String]) throws(MattermostPayloadError) {
        func required(_ name: String) throws(MattermostPayloadError) -> String {
            guard let value = fields[name], !value.isEmpty else { throw .missingField(name) }
            return value
        }
        self.init(
            teamID: try required("team_id"), channelID: try required("channel_id"), userID: try required("user_id"),
            userName: fields["user_name"].flatMap { $0.isEmpty ? nil : $0 }, command: try required("command"), text: fields["text"] ?? "",
            responseURL: fields["response_url"].flatMap { $0.isEmpty ? nil : $0 }, triggerID: fields["trigger_id"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The fields of an `application/x-www-form-urlencoded` body (`+` is a space; the last of a
    /// repeated name wins). Nil when it is not valid UTF-8 or its percent-escapes are broken.
    public static func formFields(_ body: some Collection<UInt8>) -> [String: String]? {
        guard let text = String(validating: Array(body), as: UTF8.self) else { return nil }
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else { return nil }
            fields[name] = value
        }
        return fields
    }

    private static func decode(_ part: Substring) -> String? {
        String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// The relay command line this invocation stands for: `/translate` with `fr hi` is
    /// `/translate fr hi`; the catch-all stands for its text (`/rhea translate fr hi`, the slash
    /// added when left out); `/rhea` alone stays `/rhea`, which the parser answers with help.
    public var commandLine: String {
        let typed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let name = command.hasPrefix("/") ? command : "/" + command
        if name.lowercased() == Self.catchAllCommand, !typed.isEmpty {
            return typed.hasPrefix("/") ? typed : "/" + typed
        }
        return typed.isEmpty ? name : name + " " + typed
    }

    /// The platform-neutral event: the tenant is the Mattermost team.
    public func relayEvent() -> Event {
        Event(
            platform: MattermostPlatform.name, team: teamID, channel: channelID, user: userID, userName: userName, text: commandLine,
            eventKey: triggerID.map { "trigger:" + $0 })
    }
}

/// A Mattermost payload that cannot be read: 400, saying what was wrong.
public enum MattermostPayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    case notAForm
    case missingField(String)

    public var description: String {
        switch self {
        case .notAForm: "The body is not an application/x-www-form-urlencoded form in UTF-8, as Mattermost sends slash commands."
        case .missingField(let name): "The slash command has no `\(name)`: Mattermost sends it with every command."
        }
    }
}
