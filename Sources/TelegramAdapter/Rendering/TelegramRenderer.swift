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

        var drafts = pieces.map(TelegramHTMLSegment.plain)
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
            segments += TelegramHTML.split("· " + note, limit: TelegramLimits.messageText).map(TelegramHTMLSegment.italic)
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
