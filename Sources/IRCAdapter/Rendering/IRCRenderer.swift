import RelayCore

/// A `Reply` as IRC text: plain lines (IRC shows no markup; the few formatting codes it has are
/// not used, and a model's are removed by `IRCText.cleaned`), the relay's own words naming
/// `!` commands (`BangCommands`), as an IRC client keeps `/…` for itself.
///
/// Short, as a channel reads best: a model's answer is its body — no title ("Translation ·
/// French" says what the asker just typed; the relay's own results, such as a `!history` page,
/// keep theirs) and not the line naming the one model that answered and its time — then the
/// other notes (a cut, a caveat) and, where several models voted, the agreement footer, which
/// stays in the channel however long the answer (`IRCDelivery`). `/translate fr Good morning`
/// is answered in one line.
enum IRCRenderer {
    /// The reply's lines before the footer, and the footer's line (nil without one).
    static func text(_ reply: Reply) -> (body: String, footer: String?) {
        let reply = BangCommands.rewrite(reply)
        var lines: [String] = []
        if let title = reply.title, reply.kind != .result || reply.models == nil {
            lines.append(reply.kind == .error ? "✗ \(title)" : "▸ \(title)")
        }
        // A model's Markdown fences stand alone on their lines: on IRC they are only noise.
        lines += reply.body.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("```") }.map(String.init)
        for dissent in reply.footer?.dissent ?? [] {
            let verdict = dissent.verdict.map { " (\($0.rawValue))" } ?? ""
            lines.append("dissent · \(dissent.model)\(verdict): \(dissent.reason)")
        }
        let model = reply.kind == .result && reply.models?.count == 1 ? reply.models?.first : nil
        lines += reply.notes.filter { note in model.map { !note.hasPrefix($0 + " · ") } ?? true }
        return (lines.joined(separator: "\n"), reply.footer?.summary)
    }

    /// The one progress line a run shows: its start where it has one ("⏳ Working on !run
    /// twostep…"), else a chain's first step ("⏳ Running… 1/3 (grammar)"), so the channel sees
    /// that a long chain is under way; nil for later steps and votes: IRC cannot edit a line, and
    /// a line a step would flood the channel.
    static func line(_ progress: RunProgress) -> String? {
        guard progress.partial == nil, progress.isStart || progress.completed == 1, !progress.isVoting else { return nil }
        return "⏳ " + BangCommands.rewrite(progress.line)
    }
}
