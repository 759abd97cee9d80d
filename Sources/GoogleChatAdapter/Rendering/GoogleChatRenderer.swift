import Foundation
public import RelayCore

/// Renders replies and progress as Google Chat messages.
///
/// Text goes in the message's `text` (`GoogleChatText.text`: shown as written, no mention can
/// come of it). A result is a card (v2): the title as its header, the answer in text paragraphs
/// (escaped HTML), the dissent and agreement lines in grey, and its buttons ("Run again", "Post
/// to channel") whose clicks come back as `CARD_CLICKED` events naming the function and its
/// parameters. A long reply becomes several messages, each within `GoogleChatLimits.messageBytes`;
/// the buttons go on the last.
public enum GoogleChatRenderer {
    static let errorPrefix = "⚠️ "
    static let titleLimit = 200
    static let splitter = EscapedTextSplitter { GoogleChatText.maximumEscapedBytes($0) }
    /// A paragraph widget's envelope (`{"textParagraph":{"text":…}}`) and a section's.
    static let widgetEnvelopeBytes = 64

    /// The messages for `reply`, to be sent in order; never empty.
    public static func render(_ reply: Reply, entryID: String, limit: Int = GoogleChatLimits.messageBytes) -> [GoogleChatMessage] {
        let title = oneLine(reply.title ?? "").trimmingCharacters(in: .whitespaces)
        let isError = reply.kind == .error
        var tail: [String] = []
        if let footer = reply.footer {
            for dissent in footer.dissent {
                tail.append("Dissent · \(oneLine(dissent.model))\(dissent.verdict.map { " (\($0.rawValue))" } ?? ""): \(oneLine(dissent.reason))")
            }
            tail.append(footer.summary)
            if let caveat = footer.caveat { tail.append(caveat) }
        }
        tail += reply.notes.map { oneLine($0) }
        let shownTitle = title.isEmpty ? nil : splitter.truncate((isError ? errorPrefix : "") + title, limit: titleLimit)
        let body = (isError && shownTitle == nil ? errorPrefix : "") + reply.body
        let titleBytes = shownTitle.map { GoogleChatText.maximumEscapedBytes($0) + widgetEnvelopeBytes } ?? 0
        var pieces = splitter.split(body, limit: limit - titleBytes)
        if pieces.isEmpty { pieces = [""] }
        let tailText = tail.joined(separator: "\n")
        let tailPieces = tailText.isEmpty ? [] : splitter.split(tailText, limit: limit - widgetEnvelopeBytes)
        if reply.kind == .result {
            return cards(title: shownTitle, pieces: pieces, tail: tailPieces, buttons: buttons(reply, entryID: entryID), entryID: entryID, limit: limit)
        }
        var texts = pieces.map { GoogleChatText.text($0) }
        if let shownTitle { texts[0] = "*" + GoogleChatText.text(shownTitle) + "*" + (texts[0].isEmpty ? "" : "\n" + texts[0]) }
        for piece in tailPieces.map({ GoogleChatText.text($0) }) {
            if let last = texts.last, last.utf8.count + 2 + piece.utf8.count <= limit {
                texts[texts.count - 1] = last.isEmpty ? piece : last + "\n\n" + piece
            } else {
                texts.append(piece)
            }
        }
        if texts.count == 1, texts[0].isEmpty { texts[0] = isError ? "⚠️ Error" : "(no text)" }
        return texts.map { GoogleChatMessage.text($0) }
    }

    /// One progress line ("⏳ Running… 2/5 (translate:fr)"), edited in place.
    public static func render(_ progress: RunProgress) -> GoogleChatMessage {
        .text("⏳ " + GoogleChatText.text(splitter.truncate(progress.line, limit: 1000)))
    }

    /// A short sentence.
    public static func render(note: String) -> GoogleChatMessage {
        .text(GoogleChatText.text(note))
    }

    /// A result as cards: the header on the first, the tail and the buttons on the last.
    static func cards(title: String?, pieces: [String], tail: [String], buttons: [JSONValue], entryID: String, limit: Int) -> [GoogleChatMessage] {
        var sections: [[JSONValue]] = pieces.map { [paragraph(GoogleChatText.html($0))] }
        var sizes = pieces.map { GoogleChatText.maximumEscapedBytes($0) + widgetEnvelopeBytes }
        for piece in tail {
            let size = GoogleChatText.maximumEscapedBytes(piece) + widgetEnvelopeBytes + 40
            let widget = paragraph("<font color=\"#5f6368\">" + GoogleChatText.html(piece) + "</font>")
            if let last = sizes.last, last + size <= limit {
                sections[sections.count - 1].append(widget)
                sizes[sizes.count - 1] += size
            } else {
                sections.append([widget])
                sizes.append(size)
            }
        }
        return sections.enumerated().map { index, widgets in
            var all: [JSONValue] = [["widgets": .array(widgets)]]
            if index == sections.count - 1, !buttons.isEmpty { all.append(["widgets": [["buttonList": ["buttons": .array(buttons)]]]]) }
            var card: [String: JSONValue] = ["sections": .array(all)]
            if index == 0, let title { card["header"] = ["title": .string(GoogleChatText.plain(title))] }
            let fallback = title ?? pieces[min(index, pieces.count - 1)]
            return .card(cardID: "rhea-\(index)", card: .object(card), fallback: GoogleChatText.text(splitter.truncate(oneLine(fallback), limit: 200)))
        }
    }

    static func paragraph(_ html: String) -> JSONValue {
        ["textParagraph": ["text": .string(html)]]
    }

    /// The reply's buttons; a click comes back as `CARD_CLICKED` with `common.invokedFunction`
    /// and `common.parameters`.
    static func buttons(_ reply: Reply, entryID: String) -> [JSONValue] {
        reply.actions.compactMap { action in
            switch action {
            case .postToChannel:
                return button("Post to channel", function: GoogleChatInbound.postToChannelFunction, parameters: ["entry": entryID])
            case .runAgain(let line):
                guard line.utf8.count <= GoogleChatLimits.buttonLineBytes else { return nil }
                return button("Run again", function: GoogleChatInbound.runAgainFunction, parameters: ["line": line])
            }
        }
    }

    static func button(_ text: String, function: String, parameters: [String: String]) -> JSONValue {
        let list: [JSONValue] = parameters.sorted { $0.key < $1.key }.map { ["key": .string($0.key), "value": .string($0.value)] }
        return ["text": .string(text), "onClick": ["action": ["function": .string(function), "parameters": .array(list)]]]
    }

    /// A text on one line, whatever the model wrote.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.drop(while: \.isWhitespace) }.filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// One message as the relay sends it: text, or a card with its fallback text.
public enum GoogleChatMessage: Sendable, Hashable {
    case text(String)
    case card(cardID: String, card: JSONValue, fallback: String)

    /// The `Message` resource's fields for a create, a patch or an event's answer; private to
    /// `viewer` (`users/…`) when given.
    public func body(privateTo viewer: String? = nil, thread: String? = nil) -> JSONValue {
        var message: [String: JSONValue] = [:]
        switch self {
        case .text(let text):
            message["text"] = .string(text)
        case .card(let cardID, let card, let fallback):
            message["cardsV2"] = [["cardId": .string(cardID), "card": card]]
            message["fallbackText"] = .string(fallback)
        }
        if let viewer { message["privateMessageViewer"] = ["name": .string(viewer)] }
        if let thread { message["thread"] = ["name": .string(thread)] }
        return .object(message)
    }

    /// The fields a patch replaces (`updateMask`): both, so a text message can become a card.
    static let updateMask = "text,cardsV2"
}

/// Google Chat's limits that rendering respects.
public enum GoogleChatLimits {
    /// A message, text or card, once escaped and encoded: Google Chat takes up to 32 000 bytes;
    /// this leaves room for the card's structure and the fields around it.
    public static let messageBytes = 24_000
    /// The longest command line a "Run again" button carries.
    public static let buttonLineBytes = 4_000
}
