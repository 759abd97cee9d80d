public import RelayCore

/// An interaction as Discord POSTs it to the interactions endpoint (or sends it as
/// `INTERACTION_CREATE`), reduced to what the relay uses.
///
/// Decoding takes any bytes without trapping: ids must be snowflakes, strings are bounded,
/// options are read at most three levels deep and 25 to a level, and a value of the wrong type
/// is dropped. The interaction token is a `DiscordToken`, so it never shows in a description.
public struct DiscordInteraction: Sendable, Hashable {
    /// Discord's interaction types.
    public enum Kind: Int, Sendable, Hashable {
        case ping = 1
        case applicationCommand = 2
        case messageComponent = 3
        case autocomplete = 4
        case modalSubmit = 5
    }

    /// The dedupe key: Discord's interaction id.
    public var id: String
    public var applicationID: String
    public var kind: Kind
    /// Valid 15 minutes: the interaction webhook's credential.
    public var token: DiscordToken
    /// Nil in DMs.
    public var guildID: String?
    public var channelID: String?
    /// Who acted: `member.user` in a server, `user` in a DM.
    public var user: DiscordUser?
    /// `member.permissions`: the actor's permissions in the channel (a decimal bit set), in servers.
    public var memberPermissions: String?
    /// `app_permissions`: the bot's permissions in the channel (Embed Links is 1 << 14).
    public var appPermissions: String?
    /// The user's client language (`fr`, `en-US`).
    public var locale: String?
    public var guildLocale: String?
    /// For application commands and autocomplete.
    public var command: DiscordCommandInvocation?
    /// For message components.
    public var component: DiscordComponentInvocation?

    /// The longest string value kept (Discord's own maximum for a string option).
    static let stringLimit = 6000
    /// The longest interaction token taken.
    static let tokenLimit = 1024

    /// Decodes an interaction body (already verified: see `DiscordRequestVerifier`).
    public static func decode(_ bytes: some Collection<UInt8>) throws(DiscordInteractionError) -> DiscordInteraction {
        guard let json = JSONValue.parse(bytes) else { throw .notJSON }
        return try DiscordInteraction(json: json)
    }

    /// Reads a parsed interaction.
    public init(json: JSONValue) throws(DiscordInteractionError) {
        guard case .object = json else { throw .notJSON }
        guard let rawType = json["type"]?.intValue else { throw .missingField("type") }
        guard let kind = Kind(rawValue: rawType) else { throw .unsupportedType(rawType) }
        guard let id = Self.snowflake(json["id"]) else { throw .missingField("id") }
        guard let applicationID = Self.snowflake(json["application_id"]) else { throw .missingField("application_id") }
        guard let token = json["token"]?.stringValue, (1...Self.tokenLimit).contains(token.utf8.count) else { throw .missingField("token") }
        self.id = id
        self.applicationID = applicationID
        self.kind = kind
        self.token = DiscordToken(token)
        guildID = Self.snowflake(json["guild_id"])
        channelID = Self.snowflake(json["channel_id"]) ?? Self.snowflake(json["channel"]?["id"])
        user = DiscordUser(json["member"]?["user"] ?? .null) ?? DiscordUser(json["user"] ?? .null)
        memberPermissions = json["member"]?["permissions"]?.stringValue.flatMap(Self.digits)
        appPermissions = json["app_permissions"]?.stringValue.flatMap(Self.digits)
        locale = json["locale"]?.stringValue.flatMap(Self.localeTag)
        guildLocale = json["guild_locale"]?.stringValue.flatMap(Self.localeTag)

        let data = json["data"] ?? .null
        switch kind {
        case .applicationCommand, .autocomplete:
            guard let command = DiscordCommandInvocation(data) else { throw .missingField("data.name") }
            self.command = command
        case .messageComponent:
            guard let component = DiscordComponentInvocation(data, message: json["message"]) else { throw .missingField("data.custom_id") }
            self.component = component
        case .ping, .modalSubmit:
            break
        }
    }

    static func snowflake(_ value: JSONValue?) -> String? {
        value?.stringValue.flatMap { DiscordSnowflake.isValid($0) ? $0 : nil }
    }

    /// A string value within `stringLimit` (counted in UTF-8 bytes, a bound on any other unit).
    static func text(_ value: JSONValue?, limit: Int = stringLimit) -> String? {
        value?.stringValue.flatMap { $0.utf8.count <= limit ? $0 : nil }
    }

    private static func digits(_ value: String) -> String? {
        (1...40).contains(value.utf8.count) && value.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ? value : nil
    }

    private static func localeTag(_ value: String) -> String? {
        (1...16).contains(value.utf8.count) && value.utf8.allSatisfy { $0 == UInt8(ascii: "-") || ($0 < 0x80 && Character(Unicode.Scalar($0)).isLetter) }
            ? value : nil
    }
}

extension DiscordInteraction: CustomStringConvertible {
    /// For logs: the kind, ids and command name; never the token or any text.
    public var description: String {
        let what = command.map { " /\($0.name)" } ?? component.map { _ in " component" } ?? ""
        return "DiscordInteraction(\(kind), id: \(id), guild: \(guildID ?? "-"), channel: \(channelID ?? "-"), user: \(user?.id ?? "-")\(what))"
    }
}

/// The user who acted.
public struct DiscordUser: Sendable, Hashable {
    public var id: String
    public var username: String
    /// The display name, when set.
    public var globalName: String?
    public var isBot: Bool

    /// Reads a user object; nil without an id.
    public init?(_ json: JSONValue) {
        guard let id = DiscordInteraction.snowflake(json["id"]) else { return nil }
        self.id = id
        username = DiscordInteraction.text(json["username"], limit: 128) ?? ""
        globalName = DiscordInteraction.text(json["global_name"], limit: 128)
        isBot = json["bot"]?.boolValue ?? false
    }
}

/// An application command as invoked: its name, options and, for a message command, the
/// message it was used on.
public struct DiscordCommandInvocation: Sendable, Hashable {
    /// 1 slash command, 2 user command, 3 message command.
    public var type: Int
    public var name: String
    public var options: [DiscordCommandOption]
    /// The message (or user) a context-menu command was used on.
    public var targetID: String?
    /// The target message, from `data.resolved.messages`.
    public var targetMessage: DiscordTargetMessage?

    init?(_ data: JSONValue) {
        guard let name = DiscordInteraction.text(data["name"], limit: 128), !name.isEmpty else { return nil }
        self.name = name
        type = data["type"]?.intValue.flatMap { (1...3).contains($0) ? $0 : nil } ?? 1
        options = DiscordCommandOption.list(data["options"], depth: 0)
        targetID = DiscordInteraction.snowflake(data["target_id"])
        targetMessage = targetID.flatMap { id in data["resolved"]?["messages"]?[id].flatMap(DiscordTargetMessage.init) }
    }

    /// The value of the option `name` at the top level, or inside the subcommand used.
    public func value(_ name: String) -> DiscordOptionValue? {
        for option in options {
            if option.name == name, let value = option.value { return value }
            if option.type == 1, let value = option.options.first(where: { $0.name == name })?.value { return value }
        }
        return nil
    }

    /// The subcommand used (`/chain save …` → "save"), if any.
    public var subcommand: String? {
        options.first { $0.type == 1 }?.name
    }
}

/// One option of an invoked command; a subcommand holds its own.
public struct DiscordCommandOption: Sendable, Hashable {
    public var name: String
    /// Discord's option type (1 subcommand, 3 string, 4 integer, 5 boolean, 10 number…).
    public var type: Int
    public var value: DiscordOptionValue?
    public var options: [DiscordCommandOption]

    /// Options below this depth are dropped: Discord nests at most group → subcommand → options.
    static let maximumDepth = 3

    static func list(_ json: JSONValue?, depth: Int) -> [DiscordCommandOption] {
        guard depth < maximumDepth, let items = json?.arrayValue else { return [] }
        return items.prefix(DiscordLimits.options).compactMap { DiscordCommandOption($0, depth: depth) }
    }

    init?(_ json: JSONValue, depth: Int) {
        guard let name = DiscordInteraction.text(json["name"], limit: 128), let type = json["type"]?.intValue else { return nil }
        self.name = name
        self.type = type
        value = DiscordOptionValue(json["value"], type: type)
        options = Self.list(json["options"], depth: depth + 1)
    }
}

/// An option's value, of the type the option declares (others are dropped).
public enum DiscordOptionValue: Sendable, Hashable {
    case string(String)
    case integer(Int)
    case number(Double)
    case boolean(Bool)

    init?(_ json: JSONValue?, type: Int) {
        guard let json else { return nil }
        switch type {
        case 4:
            guard let value = json.intValue else { return nil }
            self = .integer(value)
        case 5:
            guard let value = json.boolValue else { return nil }
            self = .boolean(value)
        case 10:
            guard let value = json.doubleValue, value.isFinite else { return nil }
            self = .number(value)
        default:
            // Strings, and the ids of users, channels, roles and attachments.
            guard let value = DiscordInteraction.text(json) else { return nil }
            self = .string(value)
        }
    }

    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var integer: Int? {
        if case .integer(let value) = self { return value }
        return nil
    }

    public var boolean: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }
}

/// The message a context-menu command was used on.
public struct DiscordTargetMessage: Sendable, Hashable {
    public var id: String
    public var channelID: String?
    /// Empty for a message with only embeds or attachments.
    public var content: String
    public var authorID: String?
    /// Its voice message or audio attachment, for "Transcribe".
    public var clip: VoiceClip?

    init?(_ json: JSONValue) {
        guard let id = DiscordInteraction.snowflake(json["id"]) else { return nil }
        clip = DiscordGatewayMessage.clip(in: json, origin: .repliedTo)
        self.id = id
        channelID = DiscordInteraction.snowflake(json["channel_id"])
        content = DiscordInteraction.text(json["content"]) ?? ""
        authorID = DiscordInteraction.snowflake(json["author"]?["id"])
    }
}

/// A used component: the button's `custom_id` and the message it is under.
public struct DiscordComponentInvocation: Sendable, Hashable {
    public var customID: String
    /// 2 button, 3 string select…
    public var componentType: Int
    /// The message holding the component.
    public var messageID: String?

    /// Our buttons, read back (`DiscordButton`).
    public var button: DiscordButton { DiscordButton(customID: customID) }

    init?(_ data: JSONValue, message: JSONValue?) {
        guard let customID = DiscordInteraction.text(data["custom_id"], limit: DiscordLimits.customID * 4), !customID.isEmpty else { return nil }
        self.customID = customID
        componentType = data["component_type"]?.intValue ?? 2
        messageID = DiscordInteraction.snowflake(message?["id"])
    }
}

/// Why an interaction body could not be read; surfaces as HTTP 400.
public enum DiscordInteractionError: Error, Sendable, Hashable, CustomStringConvertible {
    case notJSON
    case missingField(String)
    case unsupportedType(Int)

    public var description: String {
        switch self {
        case .notJSON: "the interaction is not a JSON object"
        case .missingField(let field): "the interaction has no usable \(field)"
        case .unsupportedType(let type): "unsupported interaction type \(type)"
        }
    }
}
