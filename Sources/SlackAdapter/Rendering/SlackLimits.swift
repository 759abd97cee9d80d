/// Slack's size limits that rendering respects, measured in UTF-16 code units.
///
/// Slack documents its limits in "characters" without naming the unit; UTF-16 code units are
/// never fewer than Unicode scalars or grapheme clusters, so staying under them in this unit
/// stays under them in any of those.
public enum SlackLimits {
    /// Text of one `section` block (and of one `context` element).
    public static let sectionText = 3000
    /// Blocks in one message.
    public static let blocksPerMessage = 50
    /// Elements in one `context` block.
    public static let contextElements = 10
    /// A message's `text`; Slack truncates longer ones (`warnings: ["message_truncated"]`).
    public static let messageText = 40_000
    /// The fallback text a reply message aims for: long answers are easier to read (and to
    /// notify about) in several messages of this size than in one huge one.
    public static let preferredMessageText = 3500
    /// A button's `value`.
    public static let buttonValue = 2000
}

extension StringProtocol {
    /// Length in Slack's unit (see `SlackLimits`).
    var slackLength: Int { utf16.count }
}
