/// A person a message names with the platform's own mention markup, as the message's text shows
/// them and as the platform knows them: Slack's `<@U123|ann>` is `@ann` in `Event.text` and
/// `U123` here. What `/admin grant @ann` resolves against; the adapter that decoded the markup
/// fills it, because the text alone has lost the id.
public struct MentionedUser: Sendable, Hashable, Codable {
    /// The mention as `Event.text` shows it (`@ann`).
    public var shown: String
    /// The platform's id of the user.
    public var id: String
    /// Whether the platform said the user is a bot (true), a person (false), or did not say (nil).
    public var isBot: Bool?

    public init(shown: String, id: String, isBot: Bool? = nil) {
        self.shown = shown
        self.id = id
        self.isBot = isBot
    }
}
