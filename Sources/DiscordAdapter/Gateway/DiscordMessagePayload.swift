public import RelayCore

/// A Discord message object, as the gateway's MESSAGE_CREATE, an interaction's resolved
/// messages and `GET /channels/{c}/messages/{m}` carry it, reduced to what the relay reads.
///
/// Only `id` is required; the rest is read tolerantly (an odd value is dropped, never the
/// message), strings are bounded, and the message it replies to is read one level deep.
public struct DiscordMessagePayload: Sendable, Hashable, Decodable {
    public var id: String
    public var channelID: String?
    public var guildID: String?
    /// Empty for a message with only embeds or attachments (or without the content intent).
    public var content: String
    public var author: DiscordUser?
    /// The ids of the users it mentions.
    public var mentionIDs: [String]
    /// `flags` (`IS_VOICE_MESSAGE` is 1 << 13).
    public var flags: Int
    public var attachments: [DiscordAttachment]
    /// Its embeds' descriptions and footers, where the relay's own replies keep their text.
    public var embedText: String
    /// `referenced_message`: the message this one replies to (without its own).
    public var referencedMessage: DiscordMessagePayload? { referenced.first }
    private var referenced: [DiscordMessagePayload]

    /// Discord's flag on a voice message (`IS_VOICE_MESSAGE`).
    static let voiceMessageFlag = 1 << 13

    private struct Embed: Decodable {
        var description: String?
        var footer: Footer?

        struct Footer: Decodable { var text: String? }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: DiscordKey.self)
            description = container.text("description")
            footer = container.lenient(Footer.self, "footer")
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        id = try container.snowflake("id")
        channelID = container.optionalSnowflake("channel_id")
        guildID = container.optionalSnowflake("guild_id")
        content = container.text("content") ?? ""
        author = container.lenient(DiscordUser.self, "author")
        mentionIDs = (container.lenient([Lenient<DiscordObjectID>].self, "mentions") ?? []).prefix(100).compactMap { $0.value?.id }
        flags = container.lenient(Int.self, "flags") ?? 0
        attachments = (container.lenient([Lenient<DiscordAttachment>].self, "attachments") ?? []).prefix(10).compactMap(\.value)
        let embeds = (container.lenient([Lenient<Embed>].self, "embeds") ?? []).prefix(10).compactMap(\.value)
        embedText = embeds.flatMap { [$0.description, $0.footer?.text].compactMap { $0 } }.joined(separator: "\n")
        // One level: the replied-to message's own reply is not read (Discord sends it null).
        let nested = decoder.codingPath.contains { $0.stringValue == "referenced_message" }
        referenced = nested ? [] : container.lenient(DiscordMessagePayload.self, "referenced_message").map { [$0] } ?? []
    }

    /// The first audio attachment — a voice message's OGG/Opus, or an audio file — as a clip: its
    /// CDN URL (checked against the configured CDN when fetched), type, size and (for voice
    /// messages) duration. Declared numbers come from outside: only sane ones are kept.
    func clip(origin: VoiceClip.Origin) -> VoiceClip? {
        let isVoiceMessage = flags & Self.voiceMessageFlag != 0
        for attachment in attachments {
            guard isVoiceMessage || attachment.contentType?.hasPrefix("audio/") == true, let url = attachment.url else { continue }
            let size = UntrustedNumber.checked(attachment.size, in: 0...(4 << 30), source: "discord", field: "size")
            let seconds = attachment.durationSeconds.flatMap {
                UntrustedNumber.checked($0, in: 0...(7 * 24 * 3600), source: "discord", field: "duration_secs")
            }
            return VoiceClip(file: url, mimeType: attachment.contentType, byteSize: size, duration: seconds.map { Int($0.rounded(.up)) }, origin: origin)
        }
        return nil
    }
}

/// An attachment of a message: what a voice clip needs.
public struct DiscordAttachment: Sendable, Hashable, Decodable {
    public var url: String?
    public var contentType: String?
    public var size: Int?
    public var durationSeconds: Double?

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        url = container.text("url", limit: 2048)
        contentType = container.text("content_type", limit: 128)
        size = container.lenient(Int.self, "size")
        durationSeconds = container.lenient(Double.self, "duration_secs")
    }
}

/// MESSAGE_DELETE's data: which message was deleted, and where.
public struct DiscordMessageDeletePayload: Sendable, Hashable, Decodable {
    public var id: String
    public var channelID: String
    public var guildID: String?

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        id = try container.snowflake("id")
        channelID = try container.snowflake("channel_id")
        guildID = container.optionalSnowflake("guild_id")
    }
}

/// MESSAGE_REACTION_ADD's data.
public struct DiscordReactionPayload: Sendable, Hashable, Decodable {
    public var userID: String
    public var channelID: String
    public var messageID: String
    public var guildID: String?
    /// The emoji's name (the character itself for a Unicode emoji).
    public var emoji: String?
    /// Whether the member who reacted is a bot.
    public var byBot: Bool
    /// The author of the message reacted to.
    public var messageAuthorID: String?

    private struct Emoji: Decodable { var name: String? }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        userID = try container.snowflake("user_id")
        channelID = try container.snowflake("channel_id")
        messageID = try container.snowflake("message_id")
        guildID = container.optionalSnowflake("guild_id")
        emoji = container.lenient(Emoji.self, "emoji")?.name.flatMap { $0.utf8.count <= 64 ? $0 : nil }
        byBot = container.lenient(DiscordMember.self, "member")?.user?.isBot ?? false
        messageAuthorID = container.optionalSnowflake("message_author_id")
    }
}
