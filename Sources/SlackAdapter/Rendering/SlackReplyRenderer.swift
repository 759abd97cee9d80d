public import RelayCore

/// Renders replies and progress as Block Kit messages.
///
/// All text from models and users is escaped (`SlackMrkdwn.escape`), so no answer can ping
/// `@channel` or anyone, or hide a link. A long reply becomes several messages, in order: each
/// holds about `SlackLimits.preferredMessageText` of the body, as sections of at most
/// `SlackLimits.sectionText`, with the same text as its fallback; the title opens the first, the
/// footer, notes and buttons close the last.
public enum SlackReplyRenderer {
    /// The longest title kept whole, before "…".
    static let titleLimit = 300
    /// Marks error replies, in the fallback text too.
    static let errorPrefix = "⚠️ "

    /// The messages for `reply`, to be posted in order.
    ///
    /// - Parameter postToChannelID: the `value` of the "Post to channel" button (an id the
    ///   caller can resolve when the button comes back, see `SlackButton`). Without one, or
    ///   when it is longer than `SlackLimits.buttonValue`, the button is left out; "Run again"
    ///   is left out when its command line is too long for a button value.
    public static func render(_ reply: Reply, postToChannelID: String? = nil) -> [SlackMessage] {
        let isError = reply.kind == .error
        var body = reply.body
        var titleLine: String?
        if let title = reply.title, !title.isEmpty {
            let escaped = SlackMrkdwn.escape(SlackTextSplitter.truncate(title, limit: titleLimit))
            titleLine = (isError ? errorPrefix : "") + "*" + escaped + "*"
        } else if isError {
            body = errorPrefix + body
        }

        // Each piece is split again into sections, before escaping, so no entity is ever cut.
        var drafts = SlackTextSplitter.split(body, limit: SlackLimits.preferredMessageText).map { piece in
            SlackMessage(
                text: SlackMrkdwn.escape(piece),
                blocks: SlackTextSplitter.split(piece, limit: SlackLimits.sectionText).map { SlackBlocks.section(SlackMrkdwn.escape($0)) })
        }
        if drafts.isEmpty { drafts = [SlackMessage(text: "", blocks: [])] }

        if let titleLine {
            drafts[0].blocks.insert(SlackBlocks.section(titleLine), at: 0)
            drafts[0].text = drafts[0].text.isEmpty ? titleLine : titleLine + "\n" + drafts[0].text
        }

        let tail = tailBlocks(reply, postToChannelID: postToChannelID)
        let last = drafts.count - 1
        drafts[last].blocks += tail
        if let footer = reply.footer {
            let summary = SlackMrkdwn.escape(footer.summary)
            drafts[last].text = drafts[last].text.isEmpty ? summary : drafts[last].text + "\n" + summary
        }
        if drafts[last].text.isEmpty { drafts[last].text = isError ? errorPrefix + "Error" : "(no text)" }
        return drafts.flatMap(fittingBlockLimit)
    }

    /// One progress message ("⏳ Running… 2/5 (translate:fr)"), meant to be edited in place.
    public static func render(_ progress: RunProgress) -> SlackMessage {
        let line = "⏳ " + SlackMrkdwn.escape(SlackTextSplitter.truncate(progress.line, limit: SlackLimits.sectionText - 2))
        return SlackMessage(text: line, blocks: [SlackBlocks.context([line])])
    }

    /// Footer, dissent, notes and buttons, in that order.
    static func tailBlocks(_ reply: Reply, postToChannelID: String?) -> [JSONValue] {
        var blocks: [JSONValue] = []
        if let footer = reply.footer {
            var lines = [footer.summary]
            if let caveat = footer.caveat { lines.append(caveat) }
            for dissent in footer.dissent {
                let verdict = dissent.verdict.map { " (\($0.rawValue))" } ?? ""
                lines.append("Dissent · \(dissent.model)\(verdict): \(oneLine(dissent.reason))")
            }
            blocks += SlackBlocks.contextBlocks(lines: lines)
        }
        if !reply.notes.isEmpty {
            blocks += SlackBlocks.contextBlocks(lines: reply.notes)
        }
        let buttons = reply.actions.compactMap { button(for: $0, postToChannelID: postToChannelID) }
        if !buttons.isEmpty { blocks.append(SlackBlocks.actions(buttons)) }
        return blocks
    }

    static func button(for action: ReplyAction, postToChannelID: String?) -> JSONValue? {
        switch action {
        case .postToChannel:
            guard let id = postToChannelID, fitsButtonValue(id) else { return nil }
            return SlackBlocks.button("Post to channel", actionID: SlackButton.postToChannelActionID, value: id, primary: true)
        case .runAgain(let commandLine):
            guard fitsButtonValue(commandLine) else { return nil }
            return SlackBlocks.button("Run again", actionID: SlackButton.runAgainActionID, value: commandLine)
        }
    }

    private static func fitsButtonValue(_ value: String) -> Bool {
        !value.isEmpty && value.slackLength <= SlackLimits.buttonValue
    }

    /// A dissent reason is shown on one line, whatever the model wrote.
    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingLeadingWhitespace() }.filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// A message with more blocks than Slack takes becomes several; the later ones are only
    /// footer, notes and buttons, so they say so in their fallback.
    private static func fittingBlockLimit(_ message: SlackMessage) -> [SlackMessage] {
        guard message.blocks.count > SlackLimits.blocksPerMessage else { return [message] }
        return stride(from: 0, to: message.blocks.count, by: SlackLimits.blocksPerMessage).map { start in
            let blocks = Array(message.blocks[start..<min(start + SlackLimits.blocksPerMessage, message.blocks.count)])
            return SlackMessage(text: start == 0 ? message.text : "(continued)", blocks: blocks)
        }
    }
}

extension Substring {
    fileprivate func trimmingLeadingWhitespace() -> Substring { drop(while: \.isWhitespace) }
}

/// Builders for the few Block Kit blocks replies use.
///
/// Every `mrkdwn` text object is `verbatim`, so Slack does not turn a bare `@channel`, a
/// channel name or an address in model output into a mention or a link; the text must already
/// be escaped (`SlackMrkdwn.escape`).
enum SlackBlocks {
    static func mrkdwn(_ escaped: String) -> JSONValue {
        ["type": "mrkdwn", "text": .string(escaped), "verbatim": true]
    }

    static func plainText(_ text: String) -> JSONValue {
        ["type": "plain_text", "text": .string(text), "emoji": true]
    }

    /// A section of at most `SlackLimits.sectionText`.
    static func section(_ escaped: String) -> JSONValue {
        ["type": "section", "text": mrkdwn(escaped)]
    }

    /// A context block: small grey text, one element per entry (at most 10).
    static func context(_ escaped: [String]) -> JSONValue {
        ["type": "context", "elements": .array(escaped.map(mrkdwn))]
    }

    static func actions(_ elements: [JSONValue]) -> JSONValue {
        ["type": "actions", "elements": .array(elements)]
    }

    static func button(_ label: String, actionID: String, value: String, primary: Bool = false) -> JSONValue {
        var button: [String: JSONValue] = [
            "type": "button", "text": plainText(label), "action_id": .string(actionID), "value": .string(value),
        ]
        if primary { button["style"] = "primary" }
        return .object(button)
    }

    /// Context blocks holding `lines` (raw text, escaped here): lines are joined into elements
    /// that fit a section's limit, a line too long for one is split, and blocks take at most
    /// ten elements each.
    static func contextBlocks(lines: [String]) -> [JSONValue] {
        var elements: [String] = []
        var current = ""
        for line in lines {
            for piece in SlackTextSplitter.split(line, limit: SlackLimits.sectionText) {
                let escaped = SlackMrkdwn.escape(piece)
                if current.isEmpty {
                    current = escaped
                } else if current.slackLength + 1 + escaped.slackLength <= SlackLimits.sectionText {
                    current += "\n" + escaped
                } else {
                    elements.append(current)
                    current = escaped
                }
            }
        }
        if !current.isEmpty { elements.append(current) }
        return stride(from: 0, to: elements.count, by: SlackLimits.contextElements).map {
            context(Array(elements[$0..<min($0 + SlackLimits.contextElements, elements.count)]))
        }
    }
}

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

/// One Slack message: the fallback `text` (notifications, clients without Block Kit) and its
/// `blocks`. Both are already escaped.
public struct SlackMessage: Sendable, Hashable {
    public var text: String
    public var blocks: [JSONValue]

    public init(text: String, blocks: [JSONValue]) {
        self.text = text
        self.blocks = blocks
    }

    /// The message as a `response_url` body: visible to the caller only or to the channel,
    /// and either a new message or the one holding the button, replaced.
    public func responseURLBody(_ type: SlackResponseType, replaceOriginal: Bool = false) -> JSONValue {
        // No previews: a model's answer must not make Slack fetch whatever URL it names.
        [
            "text": .string(text), "blocks": .array(blocks), "response_type": .string(type.rawValue), "replace_original": .bool(replaceOriginal),
            "unfurl_links": false, "unfurl_media": false,
        ]
    }
}

/// Who sees a response sent to `response_url` (or the immediate slash-command answer).
public enum SlackResponseType: String, Sendable, Hashable {
    /// Only the user who invoked the command ("Only visible to you").
    case ephemeral
    /// Everyone in the channel.
    case inChannel = "in_channel"
}

/// Escaping for Slack's `mrkdwn` (and for a message's top-level `text`).
public enum SlackMrkdwn {
    /// Exactly `&`, `<` and `>`, as Slack asks, and nothing else — scalar by scalar
    /// (`ScalarEscaper`), so no grapheme cluster can smuggle a raw `<` through.
    static let escaper = ScalarEscaper(["&": "&amp;", "<": "&lt;", ">": "&gt;"])

    /// Replaces every `&`, `<` and `>` scalar with `&amp;`, `&lt;`, `&gt;`. With no `<` left,
    /// no text can form `<!channel>`, `<!here>`, `<@U…>` or a link.
    public static func escape(_ text: some StringProtocol) -> String {
        escaper.escape(text)
    }

    /// How long `character` is once escaped, in Slack's unit (see `SlackLimits`).
    static func escapedLength(_ character: Character) -> Int {
        escaper.escapedUTF16Count(String(character))
    }
}

/// Splits text that will be escaped for mrkdwn into pieces that fit a limit once escaped: the
/// relay's one splitter (`EscapedTextSplitter`) with mrkdwn's escaped length, in UTF-16 units.
enum SlackTextSplitter {
    static let splitter = EscapedTextSplitter { SlackMrkdwn.escaper.escapedUTF16Count($0) }

    static func split(_ text: String, limit: Int) -> [String] { splitter.split(text, limit: limit) }

    /// The text cut to `limit` once escaped, ending with "…" when something was cut.
    static func truncate(_ text: String, limit: Int) -> String { splitter.truncate(text, limit: limit) }
}

/// The buttons the renderer puts under replies, as they come back in `block_actions`.
public enum SlackButton: Sendable, Hashable {
    /// "Post to channel": `id` is what the caller passed to the renderer (an outbox entry id…).
    case postToChannel(id: String)
    /// "Run again" with this command line.
    case runAgain(commandLine: String)
    /// Some other element, or one of ours without its value.
    case other(actionID: String, value: String?)

    /// `action_id` of "Post to channel".
    public static let postToChannelActionID = "post_to_channel"
    /// `action_id` of "Run again".
    public static let runAgainActionID = "run_again"

    public init(_ action: SlackBlockAction) {
        switch (action.actionID, action.value) {
        case (Self.postToChannelActionID, .some(let value)) where !value.isEmpty:
            self = .postToChannel(id: value)
        case (Self.runAgainActionID, .some(let value)) where !value.isEmpty:
            self = .runAgain(commandLine: value)
        default:
            self = .other(actionID: action.actionID, value: action.value)
        }
    }
}

extension SlackBlockActions {
    /// The used elements, read as this adapter's buttons.
    public var buttons: [SlackButton] { actions.map(SlackButton.init) }
}
