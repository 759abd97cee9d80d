/// Discord's size limits that rendering respects, measured in UTF-16 code units.
///
/// Discord counts "characters"; UTF-16 code units are never fewer than Unicode scalars or
/// grapheme clusters, so staying under them in this unit stays under them in any of those.
public enum DiscordLimits {
    /// A message's `content`.
    public static let content = 2000
    /// An embed's `description`.
    public static let embedDescription = 4096
    /// An embed's `title`.
    public static let embedTitle = 256
    /// All text of one message's embeds together (title, description, fields, footer, author).
    public static let embedTotal = 6000
    /// An embed footer's `text`.
    public static let embedFooter = 2048
    /// An embed field's `name`.
    public static let fieldName = 256
    /// An embed field's `value`.
    public static let fieldValue = 1024
    /// Fields in one embed.
    public static let fields = 25
    /// A component's `custom_id`.
    public static let customID = 100
    /// A button's `label`.
    public static let buttonLabel = 80
    /// An application command's (or option's) `name`.
    public static let commandName = 32
    /// An application command's (or option's, or choice's) `description` / choice `name`.
    public static let commandDescription = 100
    /// A string choice's `value`.
    public static let choiceValue = 100
    /// Choices of one option.
    public static let choices = 25
    /// Options of one command.
    public static let options = 25
}

extension StringProtocol {
    /// Length in Discord's unit (see `DiscordLimits`).
    var discordLength: Int { utf16.count }
}
