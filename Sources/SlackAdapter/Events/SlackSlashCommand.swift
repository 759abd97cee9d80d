/// A slash command invocation: the form Slack POSTs to the command URL (or, in Socket Mode, the
/// `slash_commands` envelope's payload, which has the same fields as JSON).
public struct SlackSlashCommand: Sendable, Hashable, Decodable {
    public var teamID: String
    public var teamDomain: String?
    /// Set for Enterprise Grid workspaces.
    public var enterpriseID: String?
    public var channelID: String
    public var channelName: String?
    public var userID: String
    public var userName: String?
    /// The command as registered, with its slash (`/translate`).
    public var command: String
    /// Everything after the command and its first space.
    public var text: String
    /// Where to send up to five deferred responses within 30 minutes; a credential, never logged.
    public var responseURL: String?
    /// Opens a modal within 3 s; also unique per invocation.
    public var triggerID: String?
    public var apiAppID: String?

    public init(
        teamID: String, teamDomain: String? = nil, enterpriseID: String? = nil, channelID: String,
        channelName: String? = nil, userID: String, userName: String? = nil, command: String, text: String,
        responseURL: String? = nil, triggerID: String? = nil, apiAppID: String? = nil
    ) {
        self.teamID = teamID
        self.teamDomain = teamDomain
        self.enterpriseID = enterpriseID
        self.channelID = channelID
        self.channelName = channelName
        self.userID = userID
        self.userName = userName
        self.command = command
        self.text = text
        self.responseURL = responseURL
        self.triggerID = triggerID
        self.apiAppID = apiAppID
    }

    enum CodingKeys: String, CodingKey {
        case teamID = "team_id"
        case teamDomain = "team_domain"
        case enterpriseID = "enterprise_id"
        case channelID = "channel_id"
        case channelName = "channel_name"
        case userID = "user_id"
        case userName = "user_name"
        case command, text
        case responseURL = "response_url"
        case triggerID = "trigger_id"
        case apiAppID = "api_app_id"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        teamID = try container.requiredString(forKey: .teamID)
        teamDomain = try container.nonEmptyString(forKey: .teamDomain)
        enterpriseID = try container.nonEmptyString(forKey: .enterpriseID)
        channelID = try container.requiredString(forKey: .channelID)
        channelName = try container.nonEmptyString(forKey: .channelName)
        userID = try container.requiredString(forKey: .userID)
        userName = try container.nonEmptyString(forKey: .userName)
        command = try container.requiredString(forKey: .command)
        text = try container.decodeIfPresent(String.self, forKey: .text) ?? ""
        responseURL = try container.nonEmptyString(forKey: .responseURL)
        triggerID = try container.nonEmptyString(forKey: .triggerID)
        apiAppID = try container.nonEmptyString(forKey: .apiAppID)
    }

    /// Decodes the raw `application/x-www-form-urlencoded` body of an HTTP slash command.
    public static func decode(form body: some Collection<UInt8>) throws(SlackPayloadError) -> SlackSlashCommand {
        try SlackPayloadDecoding.form(SlackSlashCommand.self, from: body, as: .slashCommand)
    }

    /// Decodes a Socket Mode `slash_commands` payload (JSON with the same fields).
    public static func decode(json body: some Collection<UInt8>) throws(SlackPayloadError) -> SlackSlashCommand {
        try SlackPayloadDecoding.json(SlackSlashCommand.self, from: body, as: .slashCommand)
    }
}
