public import RelayCore
import Synchronization

/// Prints an answer as the model writes it, then what the whole reply adds, so the terminal
/// shows each character once: the heading, the text as it grows, and at the end the rest of the
/// text and the small print.
final class StreamPrinter: Sendable {
    private struct State {
        var started = false
        var printed = ""
    }

    /// Writes text as it is, no newline added.
    private let raw: @Sendable (String) -> Void
    private let style: TerminalStyle
    private let state = Mutex(State())

    init(raw: @escaping @Sendable (String) -> Void, style: TerminalStyle = .plain) {
        self.raw = raw
        self.style = style
    }

    /// Prints what `partial` adds to what was printed.
    func show(_ partial: PartialAnswer) {
        let out = state.withLock { state -> String in
            var out = ""
            if !state.started, let heading = PlainTextRenderer.heading(partial.reply, style: style) { out += heading + "\n" }
            state.started = true
            // A text that no longer starts with what was printed (it never shrinks, normally) waits
            // for the whole reply.
            guard partial.text.hasPrefix(state.printed) else { return out }
            out += partial.text.dropFirst(state.printed.count)
            state.printed = partial.text
            return out
        }
        if !out.isEmpty { raw(out) }
    }

    /// What is left to print of `reply` (without its last newline): all of it when nothing was
    /// streamed; else the rest of its text and the lines under it, on a new line where the
    /// answer turned out other than what was printed.
    func rest(of reply: Reply) -> String {
        let (started, printed) = state.withLock { ($0.started, $0.printed) }
        guard started else { return PlainTextRenderer.render(reply, style: style) }
        guard reply.body.hasPrefix(printed) else { return "\n" + PlainTextRenderer.render(reply, style: style) }
        return ([String(reply.body.dropFirst(printed.count))] + PlainTextRenderer.tail(reply, style: style)).joined(separator: "\n")
    }
}
