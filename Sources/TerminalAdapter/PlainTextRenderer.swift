public import RelayCore

/// Renders a `Reply` as plain terminal text: title, body, agreement footer, dissent, notes —
/// dressed by `style` (colour on a terminal that shows it, else none).
public enum PlainTextRenderer {
    public static func render(_ reply: Reply, style: TerminalStyle = .plain) -> String {
        let heading = heading(reply, style: style).map { [$0] } ?? []
        return (heading + [reply.body] + tail(reply, style: style)).joined(separator: "\n")
    }

    /// The line above the body, when there is one.
    static func heading(_ reply: Reply, style: TerminalStyle = .plain) -> String? {
        let error = reply.kind == .error
        if let title = reply.title { return style.heading(error ? "✗ \(title)" : "▸ \(title)", error: error) }
        return error ? style.heading("✗ Error", error: true) : nil
    }

    /// The lines under the body: footer, dissent, notes.
    static func tail(_ reply: Reply, style: TerminalStyle = .plain) -> [String] {
        var lines: [String] = []
        if let footer = reply.footer {
            lines.append("— " + footer.summary)
            for dissent in footer.dissent {
                let verdict = dissent.verdict.map { " (\($0.rawValue))" } ?? ""
                lines.append("  dissent · \(dissent.model)\(verdict): \(dissent.reason)")
            }
        }
        for note in reply.notes {
            // Indented, not bulleted: a footer never starts with a separator.
            lines.append("  \(note)")
        }
        if reply.isPrivate && reply.kind == .result {
            lines.append("  (only you can see this)")
        }
        return lines.map(style.dim)
    }

    /// One progress line while a chain runs.
    public static func render(_ progress: RunProgress, style: TerminalStyle = .plain) -> String {
        style.dim("… " + progress.line)
    }
}
