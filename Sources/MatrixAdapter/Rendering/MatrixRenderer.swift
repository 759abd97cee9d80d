public import RelayCore

/// One Matrix message: the plain `body` (notifications, clients without HTML) and its HTML.
public struct MatrixMessage: Sendable, Hashable {
    public var body: String
    public var html: String

    /// The content of a new `m.notice`, as a reply to `replyTo` (in `thread` when given), that
    /// mentions no one.
    public func content(replyTo: String?, thread: String?) -> JSONValue {
        var content = fields
        var relation: [String: JSONValue] = [:]
        if let thread {
            relation = ["rel_type": "m.thread", "event_id": .string(thread), "is_falling_back": false]
            if let replyTo { relation["m.in_reply_to"] = ["event_id": .string(replyTo)] }
        } else if let replyTo {
            relation = ["m.in_reply_to": ["event_id": .string(replyTo)]]
        }
        if !relation.isEmpty { content["m.relates_to"] = .object(relation) }
        return .object(content)
    }

    /// The content of an edit that replaces `original`'s text with this one (`m.replace`): the
    /// new text in `m.new_content`, and a `* ` fallback for clients that do not show edits.
    public func editContent(of original: String) -> JSONValue {
        var content = MatrixMessage(body: "* " + body, html: "* " + html).fields
        content["m.new_content"] = .object(fields)
        content["m.relates_to"] = ["rel_type": "m.replace", "event_id": .string(original)]
        return .object(content)
    }

    private var fields: [String: JSONValue] {
        [
            "msgtype": "m.notice", "body": .string(body), "format": "org.matrix.custom.html", "formatted_body": .string(html),
            // Mentions no one, whatever the text says (spec v1.7 intentional mentions).
            "m.mentions": .object([:]),
        ]
    }
}

/// Renders replies and progress as Matrix `m.notice` messages.
///
/// A reply reads, top to bottom: the title in bold (errors marked ⚠️), the answer, a blank line,
/// one line per dissenting model, the agreement summary and its caveat in italics, and the notes
/// in italics, so the last `fact-check #N` in a message is always the relay's own (a 👍 or 👎
/// finds it there). Model and user text is escaped and defanged (`MatrixHTML`); matrix has no
/// buttons, so "Run again" and "Post to chat" are not shown. A long reply becomes several
/// messages, each well within the homeserver's 65 536-byte event limit even as an edit, which
/// carries its text twice.
public enum MatrixRenderer {
    static let errorPrefix = "⚠️ "
    static let titleLimit = 256
    static let dissentLines = 10
    static let dissentNameLimit = 100
    static let dissentReasonLimit = 300
    /// The bytes of body plus HTML one message may hold: an edit doubles it, and the event's
    /// other fields and JSON escapes fit in what remains of 65 536.
    public static let messageBytes = 24_000

    /// What a piece of raw text costs in a message: its defanged body plus its escaped HTML.
    static func cost(_ text: String) -> Int {
        let shown = MatrixHTML.defanged(text)
        return shown.utf8.count + MatrixHTML.escape(shown).utf8.count
    }

    static let splitter = EscapedTextSplitter(escapedLength: cost)

    /// The messages for `reply`, to be sent in order.
    public static func render(_ reply: Reply) -> [MatrixMessage] {
        let reply = BangCommands.rewrite(reply)
        let isError = reply.kind == .error
        var title: MatrixMessage?
        var body = reply.body
        if let raw = reply.title, !raw.isEmpty {
            let text = splitter.truncate((isError ? errorPrefix : "") + oneLine(raw), limit: titleLimit * 4)
            title = MatrixMessage(body: MatrixHTML.defanged(text), html: "<strong>" + MatrixHTML.escape(MatrixHTML.defanged(text)) + "</strong>")
        } else if isError {
            body = errorPrefix + body
        }
        let tail = tailLines(reply)
        let tailCost = tail.reduce(0) { $0 + $1.body.utf8.count + $1.html.utf8.count + 10 }
        let titleCost = title.map { $0.body.utf8.count + $0.html.utf8.count + 10 } ?? 0
        var pieces = splitter.split(body, limit: messageBytes - titleCost)
        if let last = pieces.last, !tail.isEmpty, cost(last) + tailCost > messageBytes - titleCost {
            pieces.removeLast()
            pieces += splitter.split(last, limit: max(messageBytes / 2, messageBytes - titleCost - tailCost))
        }
        var messages = pieces.map { piece in
            let shown = MatrixHTML.defanged(piece)
            return MatrixMessage(body: shown, html: MatrixHTML.escape(shown))
        }
        if let title {
            if messages.isEmpty {
                messages = [title]
            } else {
                messages[0] = MatrixMessage(body: title.body + "\n" + messages[0].body, html: title.html + "<br>" + messages[0].html)
            }
        }
        if !tail.isEmpty {
            let joined = MatrixMessage(body: tail.map(\.body).joined(separator: "\n"), html: tail.map(\.html).joined(separator: "<br>"))
            if let last = messages.last, last.body.utf8.count + last.html.utf8.count + tailCost <= messageBytes + titleCost {
                messages[messages.count - 1] = MatrixMessage(body: last.body + "\n\n" + joined.body, html: last.html + "<br><br>" + joined.html)
            } else {
                messages.append(joined)
            }
        }
        return messages.isEmpty ? [MatrixMessage(body: "(no text)", html: "(no text)")] : messages
    }

    /// One progress message ("⏳ Running… 2/5 (translate:fr)"), meant to be edited in place.
    public static func render(_ progress: RunProgress) -> MatrixMessage {
        let line = MatrixHTML.defanged("⏳ " + splitter.truncate(oneLine(BangCommands.rewrite(progress.line)), limit: 2000))
        return MatrixMessage(body: line, html: MatrixHTML.escape(line))
    }

    /// Dissent lines, the summary and its caveat, and the notes.
    static func tailLines(_ reply: Reply) -> [MatrixMessage] {
        var lines: [MatrixMessage] = []
        func add(_ raw: String, italic: Bool) {
            let shown = MatrixHTML.defanged(raw)
            let html = MatrixHTML.escape(shown)
            lines.append(MatrixMessage(body: shown, html: italic ? "<em>" + html + "</em>" : html))
        }
        if let footer = reply.footer {
            for dissent in footer.dissent.prefix(dissentLines) { add(dissentLine(dissent), italic: false) }
            if footer.dissent.count > dissentLines { add("\(footer.dissent.count - dissentLines) more models disagreed.", italic: false) }
            add(footer.summary, italic: true)
            if let caveat = footer.caveat { add(caveat, italic: true) }
        }
        for note in reply.notes { add(splitter.truncate(note, limit: 4000), italic: true) }
        return lines
    }

    /// "Dissent · mistral (partly): reason", on one line, the name and reason cut to their limits.
    static func dissentLine(_ dissent: Dissent) -> String {
        let name = splitter.truncate(oneLine(dissent.model), limit: dissentNameLimit * 4)
        let verdict = dissent.verdict.map { " (\($0.rawValue))" } ?? ""
        let reason = oneLine(dissent.reason)
        return "Dissent · \(name)\(verdict): " + (reason.isEmpty ? "(no reason given)" : splitter.truncate(reason, limit: dissentReasonLimit * 4))
    }

    /// A text on one line, whatever the model wrote.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.drop(while: \.isWhitespace) }.filter { !$0.isEmpty }.joined(separator: " ")
    }
}
