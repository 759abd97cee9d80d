import RelayCore

/// An interaction event as Google Chat POSTs it to an HTTP endpoint app (the Chat API's
/// interaction event: `type`, `space`, `user`, `message`, `common`, `action`), the fields the
/// relay reads. Read leniently beyond `type`, `space` and `user`: a field of an unexpected shape
/// is absent, not a refused event.
public struct GoogleChatEvent: Decodable, Sendable {
    /// `MESSAGE`, `ADDED_TO_SPACE`, `REMOVED_FROM_SPACE`, `CARD_CLICKED`, `APP_COMMAND`…
    public var type: String
    public var space: Space
    public var user: User
    public var message: Message?
    public var common: Common?
    /// The older shape of a card click (`actionMethodName`, `parameters`).
    public var action: Action?
    public var appCommandMetadata: AppCommandMetadata?

    public struct Space: Decodable, Sendable {
        /// `spaces/AAAA…`.
        public var name: String
        /// `SPACE`, `GROUP_CHAT`, `DIRECT_MESSAGE` (newer), with `type` `ROOM`/`DM` (older).
        public var spaceType: String?
        public var type: String?
        public var singleUserBotDm: Bool?

        enum CodingKeys: String, CodingKey { case name, spaceType, type, singleUserBotDm }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            spaceType = container.lenient(String.self, .spaceType)
            type = container.lenient(String.self, .type)
            singleUserBotDm = container.lenient(Bool.self, .singleUserBotDm)
        }

        /// A direct message between one person and the app.
        public var isDirect: Bool { spaceType == "DIRECT_MESSAGE" || type == "DM" || singleUserBotDm == true }
    }

    public struct User: Decodable, Sendable {
        /// `users/123…`.
        public var name: String
        public var displayName: String?
        /// `HUMAN` or `BOT`.
        public var type: String?

        enum CodingKeys: String, CodingKey { case name, displayName, type }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            displayName = container.lenient(String.self, .displayName)
            type = container.lenient(String.self, .type)
        }
    }

    public struct Message: Decodable, Sendable {
        /// `spaces/…/messages/…`.
        public var name: String?
        public var text: String?
        /// The text without the app's mention or the slash command.
        public var argumentText: String?
        public var thread: Thread?
        public var slashCommand: SlashCommand?
        public var sender: User?

        public struct Thread: Decodable, Sendable {
            public var name: String?
        }

        public struct SlashCommand: Decodable, Sendable {
            /// An int64, which the JSON mapping of protocol buffers writes as a string.
            public var commandId: String?

            enum CodingKeys: String, CodingKey { case commandId }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                commandId = container.lenient(String.self, .commandId) ?? container.lenient(Int64.self, .commandId).map(String.init)
            }
        }

        enum CodingKeys: String, CodingKey { case name, text, argumentText, thread, slashCommand, sender }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = container.lenient(String.self, .name)
            text = container.lenient(String.self, .text)
            argumentText = container.lenient(String.self, .argumentText)
            thread = container.lenient(Thread.self, .thread)
            slashCommand = container.lenient(SlashCommand.self, .slashCommand)
            sender = container.lenient(User.self, .sender)
        }
    }

    /// A card click: the button's function and parameters.
    public struct Common: Decodable, Sendable {
        public var invokedFunction: String?
        public var parameters: [String: String]?
    }

    public struct Action: Decodable, Sendable {
        public var actionMethodName: String?
        public var parameters: [Parameter]?

        public struct Parameter: Decodable, Sendable {
            public var key: String
            public var value: String
        }
    }

    /// A slash command in the newer event shape (`APP_COMMAND`).
    public struct AppCommandMetadata: Decodable, Sendable {
        public var appCommandId: String?

        enum CodingKeys: String, CodingKey { case appCommandId }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            appCommandId = container.lenient(String.self, .appCommandId) ?? container.lenient(Int64.self, .appCommandId).map(String.init)
        }
    }

    enum CodingKeys: String, CodingKey { case type, space, user, message, common, action, appCommandMetadata }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        space = try container.decode(Space.self, forKey: .space)
        user = try container.decode(User.self, forKey: .user)
        message = try container.decodeIfPresent(Message.self, forKey: .message)
        common = container.lenient(Common.self, .common)
        action = container.lenient(Action.self, .action)
        appCommandMetadata = container.lenient(AppCommandMetadata.self, .appCommandMetadata)
    }

    /// A card click's function, in either shape.
    public var clickedFunction: String? { common?.invokedFunction ?? action?.actionMethodName }

    /// A card click's parameter, in either shape.
    public func parameter(_ key: String) -> String? {
        common?.parameters?[key] ?? action?.parameters?.first { $0.key == key }?.value
    }
}
