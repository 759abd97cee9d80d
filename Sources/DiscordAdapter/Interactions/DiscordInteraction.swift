public import RelayCore

/// An interaction as Discord POSTs it to the interactions endpoint (or sends it as
/// `INTERACTION_CREATE`), reduced to what the relay uses.
///
/// Decoding takes any bytes without trapping: ids must be snowflakes, strings are bounded,
/// options are read at most three levels deep and 25 to a level, and a value of the wrong type
/// where the relay can do without it is dropped; what it cannot (`type`, `id`, `token`, the
/// command's `data.name`) fails the decoding, naming the field. The interaction token is a `DiscordToken`, so it never shows in a description.
public struct DiscordInteraction: Sendable, Hashable, Decodable {
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

    /// Decodes an interaction body (already verified: see `DiscordRequestVerifier`); a body that
    /// does not decode says which field is at fault (the route answers it 400).
    public static func decode(_ bytes: some Collection<UInt8>) throws(PayloadProblem) -> DiscordInteraction {
        try PayloadDecoding.json(DiscordInteraction.self, from: bytes, as: "Discord interaction")
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        let rawType = try container.decode(Int.self, forKey: "type")
        guard let kind = Kind(rawValue: rawType) else {
            throw DecodingError.dataCorruptedError(forKey: "type", in: container, debugDescription: "unsupported interaction type \(rawType)")
        }
        self.kind = kind
        id = try container.snowflake("id")
        applicationID = try container.snowflake("application_id")
        let token = try container.decode(String.self, forKey: "token")
        guard (1...Self.tokenLimit).contains(token.utf8.count) else {
            throw DecodingError.dataCorruptedError(forKey: "token", in: container, debugDescription: "not an interaction token")
        }
        self.token = DiscordToken(token)
        guildID = container.optionalSnowflake("guild_id")
        channelID = container.optionalSnowflake("channel_id") ?? container.lenient(DiscordObjectID.self, "channel")?.id
        let member = container.lenient(DiscordMember.self, "member")
        user = member?.user ?? container.lenient(DiscordUser.self, "user")
        memberPermissions = member?.permissions.flatMap(Self.digits)
        appPermissions = container.lenient(String.self, "app_permissions").flatMap(Self.digits)
        locale = container.lenient(String.self, "locale").flatMap(Self.localeTag)
        guildLocale = container.lenient(String.self, "guild_locale").flatMap(Self.localeTag)
        switch kind {
        case .applicationCommand, .autocomplete:
            command = try container.decode(DiscordCommandInvocation.self, forKey: "data")
        case .messageComponent:
            component = try container.decode(DiscordComponentInvocation.self, forKey: "data")
            component?.messageID = container.lenient(DiscordObjectID.self, "message")?.id
        case .ping, .modalSubmit:
            break
        }
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
public struct DiscordUser: Sendable, Hashable, Decodable {
    public var id: String
    public var username: String
    /// The display name, when set.
    public var globalName: String?
    public var isBot: Bool

    /// Reads a user object; it needs an id.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        id = try container.snowflake("id")
        username = container.text("username", limit: 128) ?? ""
        globalName = container.text("global_name", limit: 128)
        isBot = container.lenient(Bool.self, "bot") ?? false
    }
}

/// An application command as invoked: its name, options and, for a message command, the
/// message it was used on.
public struct DiscordCommandInvocation: Sendable, Hashable, Decodable {
    /// 1 slash command, 2 user command, 3 message command.
    public var type: Int
    public var name: String
    public var options: [DiscordCommandOption]
    /// The message (or user) a context-menu command was used on.
    public var targetID: String?
    /// The target message, from `data.resolved.messages`.
    public var targetMessage: DiscordTargetMessage?

    /// `data.resolved`: the objects the command refers to; only messages are read.
    private struct Resolved: Decodable {
        var messages: [String: Lenient<DiscordMessagePayload>]?
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        let name = try container.decode(String.self, forKey: "name")
        guard (1...128).contains(name.utf8.count) else {
            throw DecodingError.dataCorruptedError(forKey: "name", in: container, debugDescription: "not a command name")
        }
        self.name = name
        type = container.lenient(Int.self, "type").flatMap { (1...3).contains($0) ? $0 : nil } ?? 1
        options = DiscordCommandOption.list(container, depth: 0)
        targetID = container.optionalSnowflake("target_id")
        let resolved = container.lenient(Resolved.self, "resolved")
        targetMessage = targetID.flatMap { id in resolved?.messages?[id]?.value.map(DiscordTargetMessage.init) }
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
public struct DiscordCommandOption: Sendable, Hashable, Decodable {
    public var name: String
    /// Discord's option type (1 subcommand, 3 string, 4 integer, 5 boolean, 10 number…).
    public var type: Int
    public var value: DiscordOptionValue?
    public var options: [DiscordCommandOption]

    /// Options below this depth are dropped: Discord nests at most group → subcommand → options.
    static let maximumDepth = 3

    /// The `options` of `container`, read at `depth` (0 for the command's own): at most
    /// `DiscordLimits.options`, an option that does not decode left out.
    static func list(_ container: KeyedDecodingContainer<DiscordKey>, depth: Int) -> [DiscordCommandOption] {
        guard depth < maximumDepth, let items = container.lenient([Lenient<DiscordCommandOption>].self, "options") else { return [] }
        return items.prefix(DiscordLimits.options).compactMap(\.value)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        guard let name = container.text("name", limit: 128) else {
            throw DecodingError.dataCorruptedError(forKey: "name", in: container, debugDescription: "not an option name")
        }
        self.name = name
        type = try container.decode(Int.self, forKey: "type")
        value = DiscordOptionValue(container, type: type)
        // How deep this option is: one `options` key on the path for each level above it.
        let depth = decoder.codingPath.filter { $0.stringValue == "options" }.count
        options = Self.list(container, depth: depth)
    }
}

/// An option's value, of the type the option declares (others are dropped).
public enum DiscordOptionValue: Sendable, Hashable {
    case string(String)
    case integer(Int)
    case number(Double)
    case boolean(Bool)

    /// The option's `value`, read as its `type` says; nil when absent or of another type.
    init?(_ container: KeyedDecodingContainer<DiscordKey>, type: Int) {
        switch type {
        case 4:
            guard let value = container.lenient(Int.self, "value") else { return nil }
            self = .integer(value)
        case 5:
            guard let value = container.lenient(Bool.self, "value") else { return nil }
            self = .boolean(value)
        case 10:
            guard let value = container.lenient(Double.self, "value"), value.isFinite else { return nil }
            self = .number(value)
        default:
            // Strings, and the ids of users, channels, roles and attachments.
            guard let value = container.text("value") else { return nil }
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

    init(_ message: DiscordMessagePayload) {
        id = message.id
        channelID = message.channelID
        content = message.content
        authorID = message.author?.id
        clip = message.clip(origin: .repliedTo)
    }
}

/// A used component: the button's `custom_id` and the message it is under.
public struct DiscordComponentInvocation: Sendable, Hashable, Decodable {
    public var customID: String
    /// 2 button, 3 string select…
    public var componentType: Int
    /// The message holding the component (the interaction's `message`, set by it).
    public var messageID: String?

    /// Our buttons, read back (`DiscordButton`).
    public var button: DiscordButton { DiscordButton(customID: customID) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        guard let customID = container.text("custom_id", limit: DiscordLimits.customID * 4), !customID.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: "custom_id", in: container, debugDescription: "not a custom id")
        }
        self.customID = customID
        componentType = container.lenient(Int.self, "component_type") ?? 2
    }
}
