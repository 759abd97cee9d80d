import Foundation
public import RelayCore

/// Renders replies and progress as Teams message activities.
///
/// Text is sent as `textFormat: xml` (Teams' HTML) with every scalar of model or user text
/// escaped (`TeamsHTML`): what a model writes shows as written, and no `<at>` mention — the only
/// way Teams pings anyone, and only with a `mention` entity, which the relay never sends — nor
/// any markup can come of it. A result is an Adaptive Card: the title, the answer in
/// `RichTextBlock` text runs (shown as written: a text run is never read as Markdown), the
/// dissent and agreement lines, and its buttons ("Run again", "Post to channel") as
/// `Action.Submit`s whose data comes back in a message activity's `value`. A long reply becomes
/// several messages, each within `TeamsLimits.messageBytes`; the buttons go on the last.
public enum TeamsRenderer {
    /// Marks error replies.
    static let errorPrefix = "⚠️ "
    static let titleLimit = 300
    static let splitter = EscapedTextSplitter { TeamsHTML.maximumEscapedBytes($0) }
    /// In a card each line is a block of its own, whose envelope
    /// (`{"inlines":[{"text":…,"type":"TextRun"}],"spacing":"Medium","type":"RichTextBlock"}`)
    /// counts against the size too.
    static let cardSplitter = EscapedTextSplitter { cardBytes($0) }
    static func cardBytes(_ text: String) -> Int {
        TeamsHTML.maximumEscapedBytes(text) + text.utf8.reduce(0) { $0 + ($1 == 0x0A ? blockEnvelopeBytes : 0) }
    }
    static let blockEnvelopeBytes = 96

    /// The messages for `reply`, to be sent in order; never empty.
    public static func render(_ reply: Reply, entryID: String, limit: Int = TeamsLimits.messageBytes) -> [TeamsMessage] {
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
        let isCard = reply.kind == .result
        let pieceSplitter = isCard ? cardSplitter : splitter
        let titleBytes = shownTitle.map { TeamsHTML.maximumEscapedBytes($0) + blockEnvelopeBytes } ?? 0
        var pieces = pieceSplitter.split(body, limit: limit - titleBytes)
        if pieces.isEmpty { pieces = [""] }
        let tailText = tail.joined(separator: "\n")
        let tailPieces = tailText.isEmpty ? [] : pieceSplitter.split(tailText, limit: limit)
        if isCard {
            return cards(title: shownTitle, pieces: pieces, tail: tailPieces, actions: buttons(reply, entryID: entryID), limit: limit)
        }
        var texts = pieces.map { TeamsHTML.escape($0) }
        if let shownTitle { texts[0] = "<b>" + TeamsHTML.escape(shownTitle) + "</b>" + (texts[0].isEmpty ? "" : "<br>" + texts[0]) }
        for piece in tailPieces.map({ TeamsHTML.escape($0) }) {
            if let last = texts.last, last.utf8.count + 8 + piece.utf8.count <= limit {
                texts[texts.count - 1] = last.isEmpty ? piece : last + "<br><br>" + piece
            } else {
                texts.append(piece)
            }
        }
        if texts.count == 1, texts[0].isEmpty { texts[0] = isError ? "⚠️ Error" : "(no text)" }
        return texts.map { TeamsMessage.text($0) }
    }

    /// One progress line ("⏳ Running… 2/5 (translate:fr)"), edited in place.
    public static func render(_ progress: RunProgress) -> TeamsMessage {
        .text("⏳ " + TeamsHTML.escape(splitter.truncate(progress.line, limit: 1000)))
    }

    /// A short sentence.
    public static func render(note: String) -> TeamsMessage {
        .text(TeamsHTML.escape(note))
    }

    /// A result as cards: the title on the first, the tail and the buttons on the last.
    static func cards(title: String?, pieces: [String], tail: [String], actions: [JSONValue], limit: Int) -> [TeamsMessage] {
        var bodies: [[JSONValue]] = pieces.map { paragraphs($0) }
        var sizes = pieces.map { cardBytes($0) + blockEnvelopeBytes }
        if let title {
            bodies[0].insert(textRuns(title, weight: "Bolder"), at: 0)
            sizes[0] += TeamsHTML.maximumEscapedBytes(title) + blockEnvelopeBytes
        }
        for piece in tail {
            let size = cardBytes(piece) + blockEnvelopeBytes
            if let last = sizes.last, last + size <= limit {
                bodies[bodies.count - 1] += paragraphs(piece, subtle: true)
                sizes[sizes.count - 1] += size
            } else {
                bodies.append(paragraphs(piece, subtle: true))
                sizes.append(size)
            }
        }
        return bodies.enumerated().map { index, body in
            .card(adaptiveCard(body: body, actions: index == bodies.count - 1 ? actions : []))
        }
    }

    /// An Adaptive Card (1.4, which Teams renders), full width.
    static func adaptiveCard(body: [JSONValue], actions: [JSONValue]) -> JSONValue {
        var card: [String: JSONValue] = [
            "type": "AdaptiveCard", "version": "1.4", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
            "msteams": ["width": "Full"], "body": .array(body),
        ]
        if !actions.isEmpty { card["actions"] = .array(actions) }
        return .object(card)
    }

    /// Model text as blocks of plain text runs, one block per line (a text run holds no line
    /// break of its own); blank lines become spacing.
    static func paragraphs(_ text: String, subtle: Bool = false) -> [JSONValue] {
        var blocks: [JSONValue] = []
        var spaceBefore = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty {
                spaceBefore = !blocks.isEmpty
                continue
            }
            blocks.append(textRuns(String(line), subtle: subtle, spacing: spaceBefore ? "Medium" : nil))
            spaceBefore = false
        }
        return blocks.isEmpty ? [textRuns(" ")] : blocks
    }

    static func textRuns(_ text: String, weight: String? = nil, subtle: Bool = false, spacing: String? = nil) -> JSONValue {
        var run: [String: JSONValue] = ["type": "TextRun", "text": .string(TeamsHTML.plain(text))]
        if let weight { run["weight"] = .string(weight) }
        if subtle {
            run["isSubtle"] = true
            run["size"] = "Small"
        }
        var block: [String: JSONValue] = ["type": "RichTextBlock", "inlines": [.object(run)]]
        if let spacing { block["spacing"] = .string(spacing) }
        return .object(block)
    }

    /// The reply's buttons as `Action.Submit`s; their data comes back as the activity's `value`.
    static func buttons(_ reply: Reply, entryID: String) -> [JSONValue] {
        reply.actions.compactMap { action in
            switch action {
            case .postToChannel:
                return ["type": "Action.Submit", "title": "Post to channel", "data": ["rhea": "postToChannel", "entry": .string(entryID)]]
            case .runAgain(let line):
                guard line.utf8.count <= TeamsLimits.buttonLineBytes else { return nil }
                return ["type": "Action.Submit", "title": "Run again", "data": ["rhea": "runAgain", "line": .string(line)]]
            }
        }
    }

    /// A text on one line, whatever the model wrote.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.drop(while: \.isWhitespace) }.filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// One message as the relay sends it: the activity's body, HTML text or an Adaptive Card.
public enum TeamsMessage: Sendable, Hashable {
    case text(String)
    case card(JSONValue)

    /// The activity to POST, or to PUT in place of activity `id`.
    public func activity(id: String? = nil) -> JSONValue {
        var activity: [String: JSONValue] = ["type": "message"]
        switch self {
        case .text(let html):
            activity["textFormat"] = "xml"
            activity["text"] = .string(html)
        case .card(let card):
            activity["attachments"] = [["contentType": "application/vnd.microsoft.card.adaptive", "content": card]]
        }
        if let id { activity["id"] = .string(id) }
        return .object(activity)
    }
}

/// Teams' limits that rendering respects.
public enum TeamsLimits {
    /// A message, once escaped and encoded: Teams refuses activities past about 28 KB, envelope
    /// and card included (HTTP 413 `MessageSizeTooBig`); this leaves room for both.
    public static let messageBytes = 20_000
    /// The longest command line a "Run again" button carries.
    public static let buttonLineBytes = 4_000
}
