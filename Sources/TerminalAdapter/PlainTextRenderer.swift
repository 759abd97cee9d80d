public import RelayCore

/// Renders a `Reply` as plain terminal text: title, body, agreement footer, dissent, notes.
public enum PlainTextRenderer {
    public static func render(_ reply: Reply) -> String {
        var lines: [String] = []
        if let title = reply.title {
            lines.append(reply.kind == .error ? "✗ \(title)" : "▸ \(title)")
        } else if reply.kind == .error {
            lines.append("✗ Error")
        }
        lines.append(reply.body)
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
        return lines.joined(separator: "\n")
    }

    /// One progress line while a chain runs.
    public static func render(_ progress: RunProgress) -> String {
        "… " + progress.line
    }
}
