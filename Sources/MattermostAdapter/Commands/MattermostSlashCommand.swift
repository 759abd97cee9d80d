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

    /// The command in `form`; says which field Mattermost always sends is missing.
    public init(form: MattermostCommandForm) throws(MattermostPayloadError) {
        func required(_ value: String?, _ name: String) throws(MattermostPayloadError) -> String {
            guard let value, !value.isEmpty else { throw .missingField(name) }
            return value
        }
        func optional(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
        self.init(
            teamID: try required(form.teamID, "team_id"), channelID: try required(form.channelID, "channel_id"),
            userID: try required(form.userID, "user_id"), userName: optional(form.userName), command: try required(form.command, "command"),
            text: form.text ?? "", responseURL: optional(form.responseURL), triggerID: optional(form.triggerID))
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
/// A slash command's form as Mattermost POSTs it, decoded once (`FormDecoder`: each field once,
/// `+` a space, `%XX` escapes, UTF-8). Every field is optional here: the token is checked before
/// anything else is asked of the form, then `MattermostSlashCommand(form:)` names a missing one.
/// The mention lists and the rest are not read.
public struct MattermostCommandForm: Sendable, Hashable, Decodable {
    public var token: String?
    public var teamID: String?
    public var channelID: String?
    public var userID: String?
    public var userName: String?
    public var command: String?
    public var text: String?
    public var responseURL: String?
    public var triggerID: String?

    enum CodingKeys: String, CodingKey {
        case token, command, text
        case teamID = "team_id"
        case channelID = "channel_id"
        case userID = "user_id"
        case userName = "user_name"
        case responseURL = "response_url"
        case triggerID = "trigger_id"
    }

    /// The form in `body`; `.notAForm` when it is none (broken %-escapes, not UTF-8, a field twice).
    public static func decode(_ body: some Collection<UInt8>) throws(MattermostPayloadError) -> MattermostCommandForm {
        do {
            return try PayloadDecoding.form(MattermostCommandForm.self, from: body, as: "Mattermost slash command")
        } catch {
            throw .notAForm(error.problem)
        }
    }
}

public enum MattermostPayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong with it ("field `text` appears more than once").
    case notAForm(String)
    case missingField(String)

    public var description: String {
        switch self {
        case .notAForm(let problem):
            "The body is not an application/x-www-form-urlencoded form in UTF-8, as Mattermost sends slash commands: \(problem)."
        case .missingField(let name): "The slash command has no `\(name)`: Mattermost sends it with every command."
        }
    }
}
