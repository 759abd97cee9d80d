import Foundation
public import RelayCore

/// Renders replies and progress as Mattermost posts (Markdown).
///
/// A reply is its title in bold, the answer, then one line per dissenting model, the agreement
/// line, its caveat and the notes. Every piece of model or user text is escaped
/// (`MattermostMarkdown`); the only markup is the renderer's own bold title. A long reply
/// becomes several posts, in order, each within `MattermostLimits.postRunes` once escaped: the
/// title opens the first, the tail closes the last. Buttons are not rendered: Mattermost's
/// interactive buttons call back an integration URL of their own, which the relay does not serve.
public enum MattermostRenderer {
    /// Marks error replies.
    static let errorPrefix = "⚠️ "
    /// The longest title kept whole, before "…".
    static let titleLimit = 300

    static let splitter = EscapedTextSplitter { MattermostMarkdown.maximumEscapedLength($0) }

    /// The posts' messages for `reply`, to be sent in order; never empty.
    public static func render(_ reply: Reply, limit: Int = MattermostLimits.postRunes) -> [String] {
        let isError = reply.kind == .error
        var titleLine: String?
        // On one line and trimmed: `**` closes only after a non-space, and never across lines.
        let title = oneLine(reply.title ?? "").trimmingCharacters(in: .whitespaces)
        if !title.isEmpty {
            titleLine = "**" + MattermostMarkdown.escape(splitter.truncate((isError ? errorPrefix : "") + title, limit: titleLimit)) + "**"
        }
        let body = (isError && titleLine == nil ? errorPrefix : "") + reply.body
        var tail: [String] = []
        if let footer = reply.footer {
            // The agreement line after the dissent lines, as on Telegram and Discord: the last
            // `fact-check #N` in a post is then the relay's, never one a model quoted, so a 👍
            // marks the right one.
            for dissent in footer.dissent {
                tail.append("Dissent · \(oneLine(dissent.model))\(dissent.verdict.map { " (\($0.rawValue))" } ?? ""): \(oneLine(dissent.reason))")
            }
            tail.append(footer.summary)
            if let caveat = footer.caveat { tail.append(caveat) }
        }
        tail += reply.notes.map { oneLine($0) }

        // Split as raw text, escape piece by piece (no escape is ever cut); the title's length is
        // kept free in the first piece.
        let titleRunes = titleLine.map { $0.unicodeScalars.count + 1 } ?? 0
        var pieces = splitter.split(body, limit: limit - titleRunes).map(MattermostMarkdown.escape)
        if pieces.isEmpty { pieces = [""] }
        if let titleLine { pieces[0] = pieces[0].isEmpty ? titleLine : titleLine + "\n" + pieces[0] }
        for piece in splitter.split(tail.joined(separator: "\n"), limit: limit).map(MattermostMarkdown.escape) {
            if let last = pieces.last, last.unicodeScalars.count + 2 + piece.unicodeScalars.count <= limit {
                // A blank line keeps the agreement line out of the answer's last paragraph.
                pieces[pieces.count - 1] = last.isEmpty ? piece : last + "\n\n" + piece
            } else {
                pieces.append(piece)
            }
        }
        if pieces.count == 1, pieces[0].isEmpty { pieces[0] = isError ? "⚠️ Error" : "(no text)" }
        return pieces
    }

    /// One progress line ("⏳ Running… 2/5 (translate:fr)"), meant to be edited in place.
    public static func render(_ progress: RunProgress) -> String {
        "⏳ " + MattermostMarkdown.escape(splitter.truncate(progress.line, limit: 1000))
    }

    /// A text on one line, whatever the model wrote.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.drop(while: \.isWhitespace) }.filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// Mattermost's limits that rendering respects.
public enum MattermostLimits {
    /// A post's message, in Unicode scalars ("runes": `PostMessageMaxRunesV2`).
    public static let postRunes = 16_383
}
