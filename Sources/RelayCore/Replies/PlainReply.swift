/// A `Reply` as plain chat text, short as a conversation reads best, for the platforms that show
/// no markup and answer in the flow of a channel (IRC, XMPP): the relay's own words name `!`
/// commands (`BangCommands`); a model's answer is its body — no title ("Translation · French"
/// says what the asker just typed; the relay's own results, such as a `!history` page, keep
/// theirs) and not the line naming the one model that answered and its time — then dissent, the
/// other notes (a cut, a caveat) and, where several models voted, the agreement footer apart.
public enum PlainReply {
    /// The reply's text before the footer, and the footer's line (nil without one).
    public static func text(_ reply: Reply) -> (body: String, footer: String?) {
        let reply = BangCommands.rewrite(reply)
        var lines: [String] = []
        if let title = reply.title, reply.kind != .result || reply.models == nil {
            lines.append(reply.kind == .error ? "✗ \(title)" : "▸ \(title)")
        }
        // A model's Markdown fences stand alone on their lines: in plain text they are noise.
        lines += reply.body.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("```") }.map(String.init)
        for dissent in reply.footer?.dissent ?? [] {
            let verdict = dissent.verdict.map { " (\($0.rawValue))" } ?? ""
            lines.append("dissent · \(dissent.model)\(verdict): \(dissent.reason)")
        }
        let model = reply.kind == .result && reply.models?.count == 1 ? reply.models?.first : nil
        lines += reply.notes.filter { note in model.map { !note.hasPrefix($0 + " · ") } ?? true }
        return (lines.joined(separator: "\n"), reply.footer?.summary)
    }
}
