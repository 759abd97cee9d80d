public import RelayCore

/// Renders a `Reply` as plain terminal text: title, body, agreement footer, dissent, notes.
public enum PlainTextRenderer {
    public static func render(_ reply: Reply) -> String {
        let heading = heading(reply).map { [$0] } ?? []
        return (heading + [reply.body] + tail(reply)).joined(separator: "\n")
    }

    /// The line above the body, when there is one.
    static func heading(_ reply: Reply) -> String? {
        if let title = reply.title { return reply.kind == .error ? "✗ \(title)" : "▸ \(title)" }
        return reply.kind == .error ? "✗ Error" : nil
    }

    /// The lines under the body: footer, dissent, notes.
    static func tail(_ reply: Reply) -> [String] {
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
        return lines
    }

    /// One progress line while a chain runs.
    public static func render(_ progress: RunProgress) -> String {
        "… " + progress.line
    }
}
