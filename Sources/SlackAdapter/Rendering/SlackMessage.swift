public import RelayCore

/// One Slack message: the fallback `text` (notifications, clients without Block Kit) and its
/// `blocks`. Both are already escaped.
public struct SlackMessage: Sendable, Hashable {
    public var text: String
    public var blocks: [JSONValue]

    public init(text: String, blocks: [JSONValue]) {
        self.text = text
        self.blocks = blocks
    }

    /// The message as a `response_url` body: visible to the caller only or to the channel,
    /// and either a new message or the one holding the button, replaced.
    public func responseURLBody(_ type: SlackResponseType, replaceOriginal: Bool = false) -> JSONValue {
        // No previews: a model's answer must not make Slack fetch whatever URL it names.
        [
            "text": .string(text), "blocks": .array(blocks), "response_type": .string(type.rawValue), "replace_original": .bool(replaceOriginal),
            "unfurl_links": false, "unfurl_media": false,
        ]
    }
}

/// Who sees a response sent to `response_url` (or the immediate slash-command answer).
public enum SlackResponseType: String, Sendable, Hashable {
    /// Only the user who invoked the command ("Only visible to you").
    case ephemeral
    /// Everyone in the channel.
    case inChannel = "in_channel"
}
