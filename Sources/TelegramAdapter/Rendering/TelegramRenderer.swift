public import RelayCore

/// Renders replies and progress as Telegram HTML messages.
///
/// A reply reads, top to bottom: the title in bold (errors marked ⚠️), the answer, a blank line,
/// one line per dissenting model, the agreement summary and its caveat in italics, and the notes
/// in italics. The summary comes after the dissent lines (as Discord's embed footer sits under
/// its dissent fields) so that the last `fact-check #N` in a message's text is always the relay's
/// own, never one quoted in a model's reason (`LedgerReference.id(in:)` reads the last one).
///
/// Everything from a model or a user is escaped (`TelegramHTML.escape`): the only tags are the
/// renderer's `<b>` and `<i>`, so no answer can hide text, mention anyone, or show a link that
/// pretends to go somewhere else; link previews are off (`TelegramMessage.sendBody`). A long
/// reply becomes several messages, in order, each within `TelegramLimits.messageText` once
/// parsed: raw text is split first and each piece escaped whole, so no tag or entity is cut. The
/// title opens the first message; dissent, footer, notes and buttons close the last.
public enum TelegramRenderer {
    /// Marks error replies.
    static let errorPrefix = "⚠️ "
    /// The longest title kept whole, before "…".
    static let titleLimit = 256
    /// Dissent lines shown; one more line counts the rest.
    static let dissentLines = 10
    static let dissentNameLimit = 100
    static let dissentReasonLimit = 300
    /// Button labels.
    static let postToChatLabel = "Post to chat"
    static let runAgainLabel = "Run again"

    /// The messages for `reply`, to be sent in order.
    ///
    /// - Parameter entryID: the outbox entry the buttons name (`TelegramButton.Action`). Without
    ///   one there are no buttons; a button whose callback data would pass 64 bytes is left out.
    public static func render(_ reply: Reply, entryID: String? = nil) -> [TelegramMessage] {
        let isError = reply.kind == .error
        var body = reply.body
        var title: TelegramHTMLSegment?
        if let raw = reply.title, !raw.isEmpty {
            title = .bold(TelegramHTML.truncate((isError ? errorPrefix : "") + raw, limit: titleLimit))
        } else if isError {
            body = errorPrefix + body
        }
        let tail = tailSegments(reply)
        let limit = TelegramLimits.messageText
        // The title's line is kept free in every piece: simpler than re-splitting, and a title
        // is short.
        let pieceLimit = limit - (title.map { $0.length + 1 } ?? 0)
        var pieces = TelegramHTML.split(body, limit: pieceLimit)
        // A short tail stays with the answer: the last piece is cut again to leave it room.
        let tailLength = tail.reduce(TelegramHTMLSegment.tailSeparator.utf16.count) { $0 + $1.length + 1 } - 1
        if let last = pieces.last, !tail.isEmpty, tailLength <= limit / 2, TelegramHTML.parsedLength(of: last) + tailLength > pieceLimit {
            pieces.removeLast()
            pieces += TelegramHTML.split(last, limit: pieceLimit - tailLength)
        }

        // A model's answer is shown as written; the relay's own words (errors, help) set their
        // `code` spans apart.
        var drafts = pieces.map(reply.kind == .result ? TelegramHTMLSegment.plain : TelegramHTMLSegment.relayText)
        if let title {
            if drafts.isEmpty { drafts = [title] } else { drafts[0] = title.joined(drafts[0], separator: "\n") }
        }
        for (index, segment) in tail.enumerated() {
            let separator = index == 0 ? TelegramHTMLSegment.tailSeparator : "\n"
            if let last = drafts.last, last.length + separator.utf16.count + segment.length <= limit {
                drafts[drafts.count - 1] = last.joined(segment, separator: separator)
            } else {
                drafts.append(segment)
            }
        }
        // Telegram refuses an empty text (an error always has its ⚠️).
        if drafts.isEmpty { drafts = [.plain("(no text)")] }

        var messages = drafts.map { TelegramMessage(text: $0.html) }
        messages[messages.count - 1].buttons = buttons(reply, entryID: entryID)
        return messages
    }

    /// One progress message ("⏳ Running… 2/5 (translate:fr)"), meant to be edited in place.
    public static func render(_ progress: RunProgress) -> TelegramMessage {
        let prefix = "⏳ "
        let line = TelegramHTML.truncate(progress.line, limit: TelegramLimits.messageText - prefix.utf16.count)
        return TelegramMessage(text: prefix + TelegramHTML.escape(line))
    }

    /// Dissent lines, the summary and its caveat, and the notes, each at most a message long.
    static func tailSegments(_ reply: Reply) -> [TelegramHTMLSegment] {
        var segments: [TelegramHTMLSegment] = []
        if let footer = reply.footer {
            segments += footer.dissent.prefix(dissentLines).map { .plain(dissentLine($0)) }
            if footer.dissent.count > dissentLines { segments.append(.plain("\(footer.dissent.count - dissentLines) more models disagreed.")) }
            segments.append(.italic(footer.summary))
            if let caveat = footer.caveat { segments.append(.italic(caveat)) }
        }
        for note in reply.notes {
            segments += TelegramHTML.split(note, limit: TelegramLimits.messageText).map(TelegramHTMLSegment.italic)
        }
        return segments
    }

    /// "Dissent · mistral (partly): reason", on one line, the name and reason cut to their limits.
    static func dissentLine(_ dissent: Dissent) -> String {
        let name = TelegramHTML.truncate(oneLine(dissent.model), limit: dissentNameLimit)
        let verdict = dissent.verdict.map { " (\($0.rawValue))" } ?? ""
        let reason = oneLine(dissent.reason)
        return "Dissent · \(name)\(verdict): " + (reason.isEmpty ? "(no reason given)" : TelegramHTML.truncate(reason, limit: dissentReasonLimit))
    }

    /// One row: "Post to chat" (for a private result) and "Run again", each naming `entryID`.
    static func buttons(_ reply: Reply, entryID: String?) -> [[TelegramButton]] {
        guard let entryID, !entryID.isEmpty else { return [] }
        let row = reply.actions.compactMap { action -> TelegramButton? in
            switch action {
            case .postToChannel:
                TelegramButton.Action.postToChat(entryID: entryID).callbackData.map { TelegramButton(text: postToChatLabel, callbackData: $0) }
            case .runAgain(let line):
                line.isEmpty
                    ? nil : TelegramButton.Action.runAgain(entryID: entryID).callbackData.map { TelegramButton(text: runAgainLabel, callbackData: $0) }
            }
        }
        return row.isEmpty ? [] : [row]
    }

    /// A text on one line, whatever the model wrote.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.drop(while: \.isWhitespace) }.filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// A run of message text: its HTML and the length Telegram counts for it once parsed.
struct TelegramHTMLSegment: Hashable {
    var html: String
    var length: Int

    /// Between the answer and what closes it: a blank line.
    static let tailSeparator = "\n\n"

    /// Raw text, escaped.
    static func plain(_ raw: String) -> TelegramHTMLSegment {
        TelegramHTMLSegment(html: TelegramHTML.escape(raw), length: TelegramHTML.parsedLength(of: raw))
    }

    /// The relay's own words (an error, help) with their `code` spans in `<code>`, as the other
    /// platforms show them, rather than as literal backticks; a backtick without its pair stays
    /// as it is. Everything is escaped, inside the spans too: a span may quote what was typed.
    static func relayText(_ raw: String) -> TelegramHTMLSegment {
        let parts = raw.split(separator: "`", omittingEmptySubsequences: false)
        guard parts.count >= 3 else { return plain(raw) }
        var html = ""
        var length = 0
        for (index, part) in parts.enumerated() {
            let inSpan = index % 2 == 1
            if inSpan && index == parts.count - 1 {
                // The last backtick has no pair: it stays, with what follows it.
                html += "`" + TelegramHTML.escape(part)
                length += 1 + TelegramHTML.parsedLength(of: part)
            } else {
                html += inSpan ? "<code>" + TelegramHTML.escape(part) + "</code>" : TelegramHTML.escape(part)
                length += TelegramHTML.parsedLength(of: part)
            }
        }
        return TelegramHTMLSegment(html: html, length: length)
    }

    /// Raw text, escaped, in bold (the tags count nothing).
    static func bold(_ raw: String) -> TelegramHTMLSegment {
        TelegramHTMLSegment(html: "<b>" + TelegramHTML.escape(raw) + "</b>", length: TelegramHTML.parsedLength(of: raw))
    }

    /// Raw text, escaped, in italics.
    static func italic(_ raw: String) -> TelegramHTMLSegment {
        TelegramHTMLSegment(html: "<i>" + TelegramHTML.escape(raw) + "</i>", length: TelegramHTML.parsedLength(of: raw))
    }

    func joined(_ next: TelegramHTMLSegment, separator: String) -> TelegramHTMLSegment {
        TelegramHTMLSegment(html: html + separator + next.html, length: length + separator.utf16.count + next.length)
    }
}

/// One message as the renderer builds it: HTML text, already escaped, and its inline keyboard.
public struct TelegramMessage: Sendable, Hashable {
    /// HTML (parse mode `HTML`): model and user text escaped, the relay's own `<b>` and `<i>`.
    public var text: String
    /// Rows of inline keyboard buttons; empty for none.
    public var buttons: [[TelegramButton]]

    public init(text: String, buttons: [[TelegramButton]] = []) {
        self.text = text
        self.buttons = buttons
    }

    /// The `sendMessage` body, as a reply to `replyTo` when given.
    ///
    /// Link previews are off: a model's answer must not make Telegram fetch (and show a card for)
    /// whatever address it names. The reply is sent even when the message it answers was deleted
    /// meanwhile (`allow_sending_without_reply`): the answer matters more than the thread.
    public func sendBody(chatID: Int64, replyTo: Int64?) -> JSONValue {
        var body = common(chatID: chatID)
        if let replyTo {
            body["reply_parameters"] = ["message_id": .int(Int(replyTo)), "allow_sending_without_reply": true]
        }
        if !buttons.isEmpty { body["reply_markup"] = keyboard }
        return .object(body)
    }

    /// The `editMessageText` body that turns message `messageID` into this one.
    ///
    /// Always carries `reply_markup`, an empty keyboard when there are no buttons: an edit that
    /// leaves it out keeps the old buttons (a progress message's, a result's "Post to chat").
    public func editBody(chatID: Int64, messageID: Int64) -> JSONValue {
        var body = common(chatID: chatID)
        body["message_id"] = .int(Int(messageID))
        body["reply_markup"] = keyboard
        return .object(body)
    }

    private func common(chatID: Int64) -> [String: JSONValue] {
        [
            "chat_id": .int(Int(chatID)), "text": .string(text), "parse_mode": "HTML",
            "link_preview_options": ["is_disabled": true],
        ]
    }

    /// `{"inline_keyboard": [[{"text", "callback_data"}]]}`.
    private var keyboard: JSONValue {
        [
            "inline_keyboard": .array(
                buttons.map { row in .array(row.map { ["text": .string($0.text), "callback_data": .string($0.callbackData)] }) })
        ]
    }
}

/// An inline keyboard button that comes back as a `callback_query` carrying `callbackData`.
public struct TelegramButton: Sendable, Hashable {
    /// The label.
    public var text: String
    /// At most `TelegramLimits.callbackData` bytes; the renderer leaves out a button whose data
    /// would not fit.
    public var callbackData: String

    public init(text: String, callbackData: String) {
        self.text = text
        self.callbackData = callbackData
    }

    /// What a button the renderer made asks for, read back from a `callback_query`'s `data`.
    ///
    /// Both carry an outbox entry id, not the command line: a command line rarely fits 64 bytes,
    /// and the entry holds the reply with its `.runAgain(commandLine:)` and where it was sent.
    public enum Action: Sendable, Hashable {
        /// "Post to chat": post the private result of entry `entryID` in the chat it came from.
        case postToChat(entryID: String)
        /// "Run again": run the command line of entry `entryID` again.
        case runAgain(entryID: String)

        /// `callback_data` prefix of "Post to chat".
        public static let postPrefix = "post:"
        /// `callback_data` prefix of "Run again".
        public static let againPrefix = "again:"

        /// Reads `callback_data`; nil for data the renderer does not write (or without an id).
        public init?(callbackData: String) {
            // By bytes: the prefixes are ASCII, and a combining mark after the `:` must not hide it.
            if let id = Self.id(in: callbackData, after: Self.postPrefix) {
                self = .postToChat(entryID: id)
            } else if let id = Self.id(in: callbackData, after: Self.againPrefix) {
                self = .runAgain(entryID: id)
            } else {
                return nil
            }
        }

        private static func id(in data: String, after prefix: String) -> String? {
            guard data.utf8.count > prefix.utf8.count, data.utf8.starts(with: prefix.utf8) else { return nil }
            return String(decoding: data.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
        }

        /// The `callback_data` this action is sent with; nil when it passes Telegram's 64 bytes.
        public var callbackData: String? {
            let data =
                switch self {
                case .postToChat(let id): Self.postPrefix + id
                case .runAgain(let id): Self.againPrefix + id
                }
            return data.utf8.count <= TelegramLimits.callbackData ? data : nil
        }
    }
}

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

    /// `text` defanged (`defanged(_:)`), then with every `&`, `<` and `>` replaced with `&amp;`,
    /// `&lt;`, `&gt;`.
    public static func escape(_ text: some StringProtocol) -> String {
        escaper.escape(defanged(text))
    }

    /// At least how long `escape(text)` is in Telegram's unit: the UTF-16 count of the text after
    /// entity parsing, which is `text` itself (`&lt;` parses back to the `<` it replaced), and one
    /// unit for each `@` and `:`, each of which `defanged(_:)` may follow with a joiner. Counted
    /// without looking at neighbours, so that the length of a text is the sum of its pieces'
    /// (what the splitter needs): a piece that ends in `@` may be followed by a name in the next.
    public static func parsedLength(of text: some StringProtocol) -> Int {
        text.utf16.count + text.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "@") || $1 == UInt8(ascii: ":") ? 1 : 0) }
    }

    /// Invisible; breaks the shapes Telegram turns into mentions and links.
    static let joiner: Unicode.Scalar = "\u{2060}"

    /// `text` that can ping no one: Telegram makes a mention of `@username` in any parse mode and a
    /// link of `tg://user?id=…` (a mention by id) wherever they stand, so a word joiner (U+2060,
    /// invisible) goes after every `@` that a name character follows, and between `tg:` and `//`.
    /// Escaping then keeps out `<a href="tg://…">`, the third shape. What a reader sees is the
    /// same text.
    public static func defanged(_ text: some StringProtocol) -> String {
        // Most text has neither `@` nor `://` (a footer's `Verdict: true` has a colon): returned as
        // it is, without decoding.
        guard mayNeedJoiners(text) else { return String(text) }
        var out = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            out.append(scalar)
            if breaks(after: index, in: scalars) { out.append(joiner) }
        }
        return String(out)
    }

    /// Whether `text` has an `@` or a `://`, the only places a joiner can go.
    private static func mayNeedJoiners(_ text: some StringProtocol) -> Bool {
        var colon = false
        var slash = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: "@") { return true }
            if slash && byte == UInt8(ascii: "/") { return true }
            slash = colon && byte == UInt8(ascii: "/")
            colon = byte == UInt8(ascii: ":")
        }
        return false
    }

    /// Whether a joiner goes after `scalars[index]`: an `@` before a name character (letters,
    /// digits, `_`), or the `:` of `tg:` before `//` (any case).
    private static func breaks(after index: Int, in scalars: [Unicode.Scalar]) -> Bool {
        guard index + 1 < scalars.count else { return false }
        let next = scalars[index + 1]
        switch scalars[index] {
        case "@":
            return next == "_" || next.properties.isAlphabetic || next.properties.numericType != nil
        case ":":
            guard index >= 2, index + 2 < scalars.count, next == "/", scalars[index + 2] == "/" else { return false }
            return (scalars[index - 2] == "t" || scalars[index - 2] == "T") && (scalars[index - 1] == "g" || scalars[index - 1] == "G")
        default:
            return false
        }
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
