import Foundation
import RelayCore

/// A `Reply` as the body of XMPP messages: `PlainReply`'s text (no XHTML-IM: what a model wrote
/// is only ever character data; clients that read Message Styling, XEP-0393, show a model's
/// `*bold*` and code as it meant them), the agreement footer closing the last message.
///
/// Long answers are cut into messages of `messageBytes` once escaped as XML, well within every
/// server's stanza limit (Prosody's 256 KB, ejabberd's 64 KB by default).
enum XMPPRenderer {
    static let messageBytes = 12_000

    static let splitter = EscapedTextSplitter { XMLText.characterData($0).utf8.count }

    static func render(_ reply: Reply) -> [String] {
        let (body, footer) = PlainReply.text(reply)
        let tail = footer.map { "\n\n" + $0 } ?? ""
        var pieces = splitter.split(body, limit: messageBytes)
        if pieces.isEmpty { pieces = [""] }
        let last = pieces.count - 1
        if !tail.isEmpty {
            if XMLText.characterData(pieces[last] + tail).utf8.count <= messageBytes {
                pieces[last] += tail
            } else {
                pieces.append(String(tail.dropFirst(2)))
            }
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
