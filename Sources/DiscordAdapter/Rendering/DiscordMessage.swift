public import RelayCore

/// One Discord message as the renderer builds it: `content`, `embeds` and `components`, all
/// text already escaped.
public struct DiscordMessage: Sendable, Hashable {
    /// Escaped text; empty when the embeds say it all.
    public var content: String
    public var embeds: [JSONValue]
    /// Action rows of buttons.
    public var components: [JSONValue]
    /// `SUPPRESS_EMBEDS` (4): no link previews of addresses in model text.
    public var suppressLinkPreviews: Bool

    public init(content: String = "", embeds: [JSONValue] = [], components: [JSONValue] = [], suppressLinkPreviews: Bool = false) {
        self.content = content
        self.embeds = embeds
        self.components = components
        self.suppressLinkPreviews = suppressLinkPreviews
    }

    /// `EPHEMERAL`: only the user who invoked the interaction sees the message.
    public static let ephemeralFlag = 1 << 6
    /// `SUPPRESS_EMBEDS`.
    public static let suppressEmbedsFlag = 1 << 2

    /// The message as a request body (create, edit, follow-up or interaction response data).
    ///
    /// Always carries `allowed_mentions: {"parse": []}`: whatever the text holds, nobody is
    /// pinged — not `@everyone`, `@here`, a role or a user (a channel message's default would
    /// ping them all). `content`, `embeds` and `components` are always present, so an edit
    /// replaces the whole message (a progress line, the buttons) rather than keeping parts.
    /// `ephemeral` sets the flag, which only interaction responses and follow-ups honour.
    public func body(ephemeral: Bool = false) -> JSONValue {
        var body: [String: JSONValue] = [
            "content": .string(content), "embeds": .array(embeds), "components": .array(components),
            "allowed_mentions": ["parse": []],
        ]
        let flags = (ephemeral ? Self.ephemeralFlag : 0) | (suppressLinkPreviews ? Self.suppressEmbedsFlag : 0)
        if flags != 0 { body["flags"] = .int(flags) }
        return .object(body)
    }
}

/// The buttons the renderer puts under replies, as their `custom_id` comes back in a
/// MESSAGE_COMPONENT interaction.
public enum DiscordButton: Sendable, Hashable {
    /// "Post to channel": `id` is what the caller passed to the renderer (an outbox entry id…).
    case postToChannel(id: String)
    /// "Run again" with this command line.
    case runAgain(commandLine: String)
    /// Some other component, or one of ours without its value.
    case other(customID: String)

    /// `custom_id` prefix of "Post to channel".
    public static let postToChannelPrefix = "rhea:post:"
    /// `custom_id` prefix of "Run again".
    public static let runAgainPrefix = "rhea:again:"

    /// Reads a `custom_id`.
    public init(customID: String) {
        if customID.hasPrefix(Self.postToChannelPrefix), customID.count > Self.postToChannelPrefix.count {
            self = .postToChannel(id: String(customID.dropFirst(Self.postToChannelPrefix.count)))
        } else if customID.hasPrefix(Self.runAgainPrefix), customID.count > Self.runAgainPrefix.count {
            self = .runAgain(commandLine: String(customID.dropFirst(Self.runAgainPrefix.count)))
        } else {
            self = .other(customID: customID)
        }
    }

    /// The `custom_id` this button is sent with; nil when it does not fit Discord's 100.
    public var customID: String? {
        let id: String
        switch self {
        case .postToChannel(let value): id = Self.postToChannelPrefix + value
        case .runAgain(let line): id = Self.runAgainPrefix + line
        case .other(let value): id = value
        }
        return (1...DiscordLimits.customID).contains(id.discordLength) ? id : nil
    }
}
