/// An interactivity request: Slack POSTs a form whose one field, `payload`, holds JSON (in Socket
/// Mode, the `interactive` envelope's payload is that JSON).
public enum SlackInteraction: Sendable, Hashable {
    /// A button (or other block element) was used.
    case blockActions(SlackBlockActions)
    /// Shortcuts, modal submissions…: acknowledge and do nothing.
    case other(type: String)

    /// Decodes the raw `payload=<JSON>` form body of an HTTP interactivity request.
    public static func decode(form body: some Collection<UInt8>) throws(SlackPayloadError) -> SlackInteraction {
        let form = try SlackPayloadDecoding.form(PayloadForm.self, from: body, as: .interaction)
        return try decode(json: Array(form.payload.utf8))
    }

    /// Decodes the payload JSON itself.
    public static func decode(json body: some Collection<UInt8>) throws(SlackPayloadError) -> SlackInteraction {
        let raw = try SlackPayloadDecoding.json(RawInteraction.self, from: body, as: .interaction)
        guard raw.type == "block_actions" else { return .other(type: raw.type) }
        guard let user = raw.user else { throw missing("user") }
        guard let teamID = raw.team?.id ?? user.teamID else { throw missing("team.id") }
        let actions = try (raw.actions ?? []).enumerated().map { index, action throws(SlackPayloadError) in
            guard let actionID = action.actionID, !actionID.isEmpty else { throw missing("actions[\(index)].action_id") }
            return SlackBlockAction(actionID: actionID, value: action.value, blockID: action.blockID, type: action.type)
        }
        guard !actions.isEmpty else { throw missing("actions") }
        var blockActions = SlackBlockActions(
            teamID: teamID, userID: user.id, userName: user.username ?? user.name,
            channelID: raw.channel?.id ?? raw.container?.channelID, responseURL: raw.responseURL, triggerID: raw.triggerID,
            messageTS: raw.message?.ts ?? raw.container?.messageTS, threadTS: raw.message?.threadTS ?? raw.container?.threadTS,
            isEphemeral: raw.container?.isEphemeral ?? false, actions: actions)
        // The clicker's own workspace: in a channel shared with another organisation it may
        // differ from the team the app is installed in.
        blockActions.userTeamID = user.teamID
        return .blockActions(blockActions)
    }

    private static func missing(_ field: String) -> SlackPayloadError {
        SlackPayloadError(.interaction, "missing field `\(field)`")
    }
}

/// A `block_actions` payload: who used which element, on which message.
public struct SlackBlockActions: Sendable, Hashable {
    public var teamID: String
    public var userID: String
    public var userName: String?
    /// Absent for elements outside conversations (App Home, modals).
    public var channelID: String?
    /// Answers go here (ephemeral messages can only be changed through it); never logged.
    public var responseURL: String?
    public var triggerID: String?
    /// The message holding the element (`message.ts`, or `container.message_ts` for an
    /// ephemeral message, which Slack sends without `message`).
    public var messageTS: String?
    /// That message's thread, when it is in one.
    public var threadTS: String?
    public var isEphemeral: Bool
    /// Usually one.
    public var actions: [SlackBlockAction]
    /// The workspace of the user who clicked (`user.team_id`), when Slack says.
    public var userTeamID: String?

    public init(
        teamID: String, userID: String, userName: String? = nil, channelID: String? = nil, responseURL: String? = nil,
        triggerID: String? = nil, messageTS: String? = nil, threadTS: String? = nil, isEphemeral: Bool = false,
        actions: [SlackBlockAction]
    ) {
        self.teamID = teamID
        self.userID = userID
        self.userName = userName
        self.channelID = channelID
        self.responseURL = responseURL
        self.triggerID = triggerID
        self.messageTS = messageTS
        self.threadTS = threadTS
        self.isEphemeral = isEphemeral
        self.actions = actions
    }
}

/// One used element: its `action_id` and, for a button, its `value`.
public struct SlackBlockAction: Sendable, Hashable {
    public var actionID: String
    public var value: String?
    public var blockID: String?
    /// `button`, `static_select`…
    public var type: String?

    public init(actionID: String, value: String? = nil, blockID: String? = nil, type: String? = nil) {
        self.actionID = actionID
        self.value = value
        self.blockID = blockID
        self.type = type
    }
}

struct PayloadForm: Decodable {
    var payload: String
}

/// The interactivity JSON, only the fields the adapter reads.
struct RawInteraction: Decodable {
    struct User: Decodable {
        var id: String
        var username: String?
        var name: String?
        var teamID: String?

        enum CodingKeys: String, CodingKey {
            case id, username, name
            case teamID = "team_id"
        }
    }

    struct Identified: Decodable {
        var id: String
    }

    struct Container: Decodable {
        var messageTS: String?
        var channelID: String?
        var threadTS: String?
        var isEphemeral: Bool?

        enum CodingKeys: String, CodingKey {
            case messageTS = "message_ts"
            case channelID = "channel_id"
            case threadTS = "thread_ts"
            case isEphemeral = "is_ephemeral"
        }
    }

    struct Message: Decodable {
        var ts: String?
        var threadTS: String?

        enum CodingKeys: String, CodingKey {
            case ts
            case threadTS = "thread_ts"
        }
    }

    struct Action: Decodable {
        var actionID: String?
        var value: String?
        var blockID: String?
        var type: String?

        enum CodingKeys: String, CodingKey {
            case actionID = "action_id"
            case value
            case blockID = "block_id"
            case type
        }
    }

    var type: String
    var user: User?
    var team: Identified?
    var channel: Identified?
    var container: Container?
    var message: Message?
    var responseURL: String?
    var triggerID: String?
    var actions: [Action]?

    enum CodingKeys: String, CodingKey {
        case type, user, team, channel, container, message
        case responseURL = "response_url"
        case triggerID = "trigger_id"
        case actions
    }
}
