public import RelayCore

/// Renders replies and progress as Discord messages.
///
/// A reply is an embed: its title, the answer as the description, a colour by verdict (true
/// green, false red, partly amber, unverifiable grey; errors red, the rest blurple), the
/// agreement line (verdict, %, answered/asked, elapsed), its caveat and the notes as the footer,
/// and one field per dissenting model. Model and user text is escaped (`DiscordMarkdown`); the
/// footer is not, as Discord shows footers without markdown. A long answer becomes several
/// messages, in order, each within `DiscordLimits.embedDescription` and `embedTotal`: the title
/// opens the first, footer, fields and buttons close the last. Every message carries
/// `allowed_mentions: {"parse": []}` (`DiscordMessage.body`).
///
/// `renderAsContent` gives the same reply as plain `content` (2 000 per message), for channels
/// where the bot may not embed (no Embed Links permission, where Discord drops embeds silently).
public enum DiscordRenderer {
    /// Embed colours, by verdict and kind.
    public enum Colour {
        public static let `true` = 0x57F287
        public static let `false` = 0xED4245
        public static let partly = 0xF0B232
        public static let unverifiable = 0x95A5A6
        public static let error = 0xED4245
        public static let neutral = 0x5865F2
    }

    /// Marks error replies.
    static let errorPrefix = "⚠️ "
    /// The footer's share of an embed: the rest is the answer's.
    static let footerLimit = 1024
    /// Dissent fields shown; the rest are counted in one more field.
    static let dissentFields = 10
    static let dissentNameLimit = 100
    static let dissentReasonLimit = 300

    /// The messages for `reply`, to be sent in order.
    ///
    /// - Parameter postToChannelID: what the "Post to channel" button carries back (an id the
    ///   caller resolves, see `DiscordButton`); without one the button is left out, as is a
    ///   button whose `custom_id` would pass Discord's 100.
    public static func render(_ reply: Reply, postToChannelID: String? = nil) -> [DiscordMessage] {
        let isError = reply.kind == .error
        let colour = colour(of: reply)
        var body = reply.body
        var title: String?
        if let raw = reply.title, !raw.isEmpty {
            title = DiscordMarkdown.escape(DiscordTextSplitter.truncate((isError ? errorPrefix : "") + raw, limit: DiscordLimits.embedTitle))
        } else if isError {
            body = errorPrefix + body
        }
        let footer = footerText(reply)
        let fields = dissentFields(reply)
        let tailLength =
            footer.discordLength + fields.reduce(0) { $0 + ($1["name"]?.stringValue?.discordLength ?? 0) + ($1["value"]?.stringValue?.discordLength ?? 0) }

        var pieces = DiscordTextSplitter.split(body, limit: DiscordLimits.embedDescription)
        // The last embed also holds the footer and fields (and the first the title): all within
        // the total an embed may hold.
        let budget = DiscordLimits.embedTotal - tailLength - (pieces.count <= 1 ? title?.discordLength ?? 0 : 0)
        if let last = pieces.last, DiscordMarkdown.maximumEscapedLength(last) > budget {
            pieces.removeLast()
            pieces += DiscordTextSplitter.split(last, limit: max(2, budget))
        }
        if pieces.isEmpty { pieces = [""] }

        var messages = pieces.map { piece -> DiscordMessage in
            var embed: [String: JSONValue] = ["type": "rich", "color": .int(colour)]
            if !piece.isEmpty { embed["description"] = .string(DiscordMarkdown.escape(piece)) }
            return DiscordMessage(embeds: [.object(embed)])
        }
        if let title { messages[0].embeds[0] = merged(messages[0].embeds[0], ["title": .string(title)]) }
        let last = messages.count - 1
        var tail: [String: JSONValue] = [:]
        if !footer.isEmpty { tail["footer"] = ["text": .string(footer)] }
        if !fields.isEmpty { tail["fields"] = .array(fields) }
        messages[last].embeds[0] = merged(messages[last].embeds[0], tail)
        if messages[last].embeds[0]["description"] == nil, messages[last].embeds[0]["title"] == nil, tail.isEmpty {
            // An embed must show something.
            messages[last].embeds[0] = merged(messages[last].embeds[0], ["description": isError ? "⚠️ Error" : "(no text)"])
        }
        messages[last].components = components(reply, postToChannelID: postToChannelID)
        return messages
    }

    /// The same reply as plain `content`, without embeds; link previews suppressed.
    public static func renderAsContent(_ reply: Reply, postToChannelID: String? = nil) -> [DiscordMessage] {
        let isError = reply.kind == .error
        var lines: [String] = []
        if let title = reply.title, !title.isEmpty {
            // Bold, around escaped text: the only markdown here is the renderer's own.
            lines.append("**" + DiscordMarkdown.escape(DiscordTextSplitter.truncate((isError ? errorPrefix : "") + title, limit: 200)) + "**")
        }
        let body = (isError && (reply.title ?? "").isEmpty ? errorPrefix : "") + reply.body
        var tail: [String] = []
        if let footer = reply.footer {
            tail.append(footer.summary)
            if let caveat = footer.caveat { tail.append(caveat) }
            for dissent in footer.dissent.prefix(dissentFields) {
                tail.append("Dissent · \(dissent.model)\(dissent.verdict.map { " (\($0.rawValue))" } ?? ""): \(oneLine(dissent.reason))")
            }
        }
        tail += reply.notes

        // Title, body and tail are split as raw text, then escaped piece by piece; the title's
        // markup is added after, so its length is kept free in the first piece.
        let titleLength = lines.first.map { $0.discordLength + 1 } ?? 0
        var pieces = DiscordTextSplitter.split(body, limit: DiscordLimits.content - titleLength).map(DiscordMarkdown.escape)
        let tailPieces = DiscordTextSplitter.split(tail.joined(separator: "\n"), limit: DiscordLimits.content).map(DiscordMarkdown.escape)
        if pieces.isEmpty { pieces = [""] }
        if let titleLine = lines.first { pieces[0] = pieces[0].isEmpty ? titleLine : titleLine + "\n" + pieces[0] }
        for piece in tailPieces {
            if let last = pieces.last, last.discordLength + 1 + piece.discordLength <= DiscordLimits.content {
                pieces[pieces.count - 1] = last.isEmpty ? piece : last + "\n" + piece
            } else {
                pieces.append(piece)
            }
        }
        if pieces.count == 1, pieces[0].isEmpty { pieces[0] = isError ? "⚠️ Error" : "(no text)" }
        var messages = pieces.map { DiscordMessage(content: $0, suppressLinkPreviews: true) }
        messages[messages.count - 1].components = components(reply, postToChannelID: postToChannelID)
        return messages
    }

    /// One progress message ("⏳ Running… 2/5 (translate:fr)"), meant to be edited in place.
    public static func render(_ progress: RunProgress) -> DiscordMessage {
        let line = DiscordMarkdown.escape(DiscordTextSplitter.truncate(progress.line, limit: DiscordLimits.content - 2))
        return DiscordMessage(content: "⏳ " + line, suppressLinkPreviews: true)
    }

    /// The embed colour for `reply`.
    public static func colour(of reply: Reply) -> Int {
        switch reply.footer?.verdict {
        case .true: Colour.true
        case .false: Colour.false
        case .partly: Colour.partly
        case .unverifiable: Colour.unverifiable
        case nil: reply.kind == .error ? Colour.error : Colour.neutral
        }
    }

    /// Agreement line, caveat and notes, one per line; plain text (footers show no markdown).
    static func footerText(_ reply: Reply) -> String {
        var lines: [String] = []
        if let footer = reply.footer {
            lines.append(footer.summary)
            if let caveat = footer.caveat { lines.append(caveat) }
        }
        lines += reply.notes.map { oneLine($0) }
        let text = lines.joined(separator: "\n")
        guard text.discordLength > footerLimit else { return text }
        var cut = ""
        for character in text {
            guard cut.discordLength + String(character).discordLength < footerLimit else { break }
            cut.append(character)
        }
        return cut + "…"
    }

    /// One field per dissenting model (at most `dissentFields`, then one that counts the rest).
    static func dissentFields(_ reply: Reply) -> [JSONValue] {
        guard let footer = reply.footer, !footer.dissent.isEmpty else { return [] }
        var fields: [JSONValue] = footer.dissent.prefix(dissentFields).map { dissent in
            let name = "Dissent · \(oneLine(dissent.model))" + (dissent.verdict.map { " (\($0.rawValue))" } ?? "")
            let reason = oneLine(dissent.reason)
            return [
                "name": .string(DiscordMarkdown.escape(DiscordTextSplitter.truncate(name, limit: dissentNameLimit))),
                "value": .string(
                    reason.isEmpty ? "(no reason given)" : DiscordMarkdown.escape(DiscordTextSplitter.truncate(reason, limit: dissentReasonLimit))),
                "inline": false,
            ]
        }
        if footer.dissent.count > dissentFields {
            fields.append(["name": "More dissent", "value": .string("\(footer.dissent.count - dissentFields) more models disagreed."), "inline": false])
        }
        return fields
    }

    /// The action row under a result: "Post to channel" (primary) and "Run again".
    static func components(_ reply: Reply, postToChannelID: String?) -> [JSONValue] {
        let buttons: [JSONValue] = reply.actions.compactMap { action in
            switch action {
            case .postToChannel:
                guard let id = postToChannelID, !id.isEmpty, let customID = DiscordButton.postToChannel(id: id).customID else { return nil }
                return button("Post to channel", customID: customID, style: 1)
            case .runAgain(let line):
                guard !line.isEmpty, let customID = DiscordButton.runAgain(commandLine: line).customID else { return nil }
                return button("Run again", customID: customID, style: 2)
            }
        }
        return buttons.isEmpty ? [] : [["type": 1, "components": .array(buttons)]]
    }

    /// A button (component type 2); style 1 is primary, 2 secondary.
    static func button(_ label: String, customID: String, style: Int) -> JSONValue {
        ["type": 2, "style": .int(style), "label": .string(label), "custom_id": .string(customID)]
    }

    /// A text on one line, whatever the model wrote.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.drop(while: \.isWhitespace) }.filter { !$0.isEmpty }.joined(separator: " ")
    }

    private static func merged(_ value: JSONValue, _ members: [String: JSONValue]) -> JSONValue {
        guard case .object(var object) = value else { return value }
        object.merge(members) { _, new in new }
        return .object(object)
    }
}
