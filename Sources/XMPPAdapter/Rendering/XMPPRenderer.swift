import Foundation
import RelayCore

/// A `Reply` as the body of XMPP messages: plain text (no XHTML-IM: what a model wrote is only
/// ever character data), the relay's own words naming `!` commands (`BangCommands`, as in
/// Matrix and IRC: clients keep `/…` for their own commands). A title is a line of its own
/// in `*…*`, which clients that read Message Styling (XEP-0393) show in bold; a model's Markdown
/// reads the same way there.
///
/// Long answers are cut into messages of `messageBytes` (once escaped as XML), within every
/// server's stanza limit (Prosody's 256 KB, ejabberd's 64 KB by default) with room to spare;
/// the notes and the agreement footer close the last.
enum XMPPRenderer {
    static let messageBytes = 12_000

    static let splitter = EscapedTextSplitter { XMLText.characterData($0).utf8.count }

    static func render(_ reply: Reply) -> [String] {
        let reply = BangCommands.rewrite(reply)
        var head: [String] = []
        if let title = reply.title, !title.isEmpty {
            head.append(reply.kind == .error ? "✗ *\(oneLine(title))*" : "*\(oneLine(title))*")
        } else if reply.kind == .error {
            head.append("✗")
        }
        var tail: [String] = []
        if let footer = reply.footer {
            for dissent in footer.dissent {
                let verdict = dissent.verdict.map { " (\($0.rawValue))" } ?? ""
                tail.append("Dissent · \(oneLine(dissent.model))\(verdict): \(oneLine(dissent.reason))")
            }
            tail.append(footer.summary)
            if let caveat = footer.caveat { tail.append(caveat) }
        }
        tail += reply.notes
        let headText = head.joined(separator: " ")
        let tailText = tail.joined(separator: "\n")
        let reserve = (headText.isEmpty ? 0 : headText.utf8.count * 2 + 1) + (tailText.isEmpty ? 0 : XMLText.characterData(tailText).utf8.count + 2)
        var pieces = splitter.split(reply.body, limit: max(messageBytes / 2, messageBytes - reserve))
        if pieces.isEmpty { pieces = [""] }
        if !headText.isEmpty { pieces[0] = pieces[0].isEmpty ? headText : headText + "\n" + pieces[0] }
        if !tailText.isEmpty {
            let last = pieces.count - 1
            pieces[last] = pieces[last].isEmpty ? tailText : pieces[last] + "\n\n" + tailText
        }
        return pieces.map { $0.isEmpty ? "(no text)" : $0 }
    }

    /// One progress line ("⏳ Running… 2/5 (translate:fr)"), corrected in place as the run goes.
    static func line(_ progress: RunProgress) -> String {
        "⏳ " + splitter.truncate(oneLine(BangCommands.rewrite(progress.line)), limit: 2_000)
    }

    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
    }
}
