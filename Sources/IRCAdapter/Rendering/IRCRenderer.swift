import RelayCore

/// A `Reply` as IRC text: `PlainReply`'s (the few formatting codes IRC has are not used, and a
/// model's are removed by `IRCText.cleaned`); the agreement footer stays in the channel however
/// long the answer (`IRCDelivery`). `/translate fr Good morning` is answered in one line.
enum IRCRenderer {
    /// The reply's lines before the footer, and the footer's line (nil without one).
    static func text(_ reply: Reply) -> (body: String, footer: String?) { PlainReply.text(reply) }

    /// The one progress line a run shows: its start where it has one ("⏳ Working on !run
    /// twostep…"), else a chain's first step ("⏳ Running… 1/3 (grammar)"), so the channel sees
    /// that a long chain is under way; nil for later steps and votes: IRC cannot edit a line, and
    /// a line a step would flood the channel.
    static func line(_ progress: RunProgress) -> String? {
        guard progress.partial == nil, progress.isStart || progress.completed == 1, !progress.isVoting else { return nil }
        return "⏳ " + BangCommands.rewrite(progress.line)
    }
}
