public import RelayCore

/// Immediate answers to Slack's HTTP requests (within its 3-second deadline), and small
/// `response_url` bodies.
public enum SlackAck {
    /// The slash-command answer sent while the real one is computed: ephemeral, so the
    /// channel is not disturbed by it.
    public static func workingOnIt(_ text: String = "Working on it…") -> JSONValue {
        ["response_type": .string(SlackResponseType.ephemeral.rawValue), "text": .string("⏳ " + SlackMrkdwn.escape(text))]
    }

    /// The answer to the Events API `url_verification` handshake.
    public static func challenge(_ challenge: String) -> JSONValue {
        ["challenge": .string(challenge)]
    }

    /// A `response_url` body that deletes the message holding the button (an ephemeral result
    /// once "Post to channel" has posted it for everyone).
    public static let deleteOriginal: JSONValue = ["delete_original": true]
}
