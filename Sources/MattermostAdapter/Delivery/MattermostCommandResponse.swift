public import RelayCore

/// A slash command's response: the immediate answer and what is POSTed to its `response_url`.
public enum MattermostCommandResponse {
    public enum ResponseType: String, Sendable, Hashable {
        /// Only the person who ran the command sees it.
        case ephemeral
        /// Everyone in the channel.
        case inChannel = "in_channel"
    }

    /// `{"response_type","text","skip_slack_parsing":true}`; `text` is escaped Markdown already.
    /// Slack parsing is skipped so no `<url|text>` or `<!channel>` is ever translated.
    public static func body(_ type: ResponseType, text: String) -> JSONValue {
        ["response_type": .string(type.rawValue), "text": .string(text), "skip_slack_parsing": true]
    }

    /// The acknowledgement while the answer is computed: ephemeral, so the channel is not disturbed.
    public static func workingOnIt() -> JSONValue {
        body(.ephemeral, text: "⏳ Working on it…")
    }

    /// The acknowledgement when the command was not accepted (busy, or the store failed).
    public static func refused(_ text: String) -> JSONValue {
        body(.ephemeral, text: MattermostMarkdown.escape(text))
    }
}
