import RelayCore

/// Telegram's limits that rendering and registration respect.
///
/// Telegram counts a message's text *after* entity parsing, in UTF-16 code units (the unit its
/// entity offsets use): `<b>` and `</b>` count nothing and `&amp;` counts one. Callback data is
/// counted in bytes of UTF-8.
public enum TelegramLimits {
    /// A message's text, parsed (`sendMessage`, `editMessageText`).
    public static let messageText = 4096
    /// An inline button's `callback_data`, in UTF-8 bytes.
    public static let callbackData = 64
    /// A bot command's name (`setMyCommands`), lowercase `a-z`, `0-9` and `_`.
    public static let commandName = 32
    /// A bot command's description.
    public static let commandDescription = 256
    /// Commands in one `setMyCommands` call.
    public static let commands = 100
}

/// Escaping of model and user text for Telegram's HTML parse mode, so it shows exactly as written.
///
/// HTML mode (not MarkdownV2) because it needs only three escapes, and because a text that is
/// escaped can hold no tag at all: no `<a href>` that disguises a link, no `tg://user?id=` mention,
/// no `<tg-spoiler>` that hides words. The only tags in a rendered message are the renderer's own
/// (`<b>` titles, `<i>` small print).
public enum TelegramHTML {
    /// Exactly `&`, `<` and `>`, scalar by scalar (`ScalarEscaper`), so no grapheme cluster can
    /// smuggle a raw `<` through. `"` is left alone: it only matters inside attribute values, and
    /// the relay never puts text there.
    static let escaper = ScalarEscaper(["&": "&amp;", "<": "&lt;", ">": "&gt;"])

    /// Splits raw text into pieces whose escaped form Telegram counts within a limit. Telegram
    /// counts the parsed text, which is the raw text: an entity counts as the one character it
    /// stands for, so the length to split by is the raw UTF-16 count.
    static let splitter = EscapedTextSplitter { parsedLength(of: $0) }

    /// `text` with every `&`, `<` and `>` replaced with `&amp;`, `&lt;`, `&gt;`.
    public static func escape(_ text: some StringProtocol) -> String {
        escaper.escape(text)
    }

    /// How long `escape(text)` is in Telegram's unit: the UTF-16 count of the text after entity
    /// parsing, which is `text` itself (`&lt;` parses back to the `<` it replaced).
    public static func parsedLength(of text: some StringProtocol) -> Int {
        text.utf16.count
    }

    /// Raw `text` in pieces of at most `limit` parsed units each (escape every piece afterwards:
    /// no entity is ever cut, no surrogate pair or character is broken).
    static func split(_ text: String, limit: Int) -> [String] {
        // A surrogate pair is two units: a piece must hold any one scalar.
        precondition(limit >= 2, "a piece must hold any one scalar")
        return splitter.split(text, limit: limit)
    }

    /// Raw `text` cut to `limit` parsed units, ending with "…" when something was cut.
    static func truncate(_ text: String, limit: Int) -> String {
        splitter.truncate(text, limit: limit)
    }
}
