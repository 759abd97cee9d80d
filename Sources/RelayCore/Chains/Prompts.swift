import Foundation

/// Prompts the relay itself writes, kept in one place. (Backends keep their own per-action prompts.)
public enum Prompts {
    /// What a `verify` block asks the models to judge.
    public static func verifyClaim(_ text: String) -> String {
        "Is the following text accurate, correct and free of errors? Judge it as a claim.\n\n\(text)"
    }
}

/// Fills a custom command template: `{input}`, `{context}`, `{user}`, `{lang}`.
public enum Template {
    public static let placeholders = ["{input}", "{context}", "{user}", "{lang}"]
    public static let maxLength = 2000

    /// Without `{input}` in the template, the input (if any) is appended after a blank line.
    public static func fill(_ template: String, input: String, context: String, user: String, language: Language) -> String {
        // One pass over the template only: a value is never scanned again, so a replied-to
        // message or a user name that contains `{input}` stays text.
        let values = ["{input}": input, "{context}": context, "{user}": user, "{lang}": language.name]
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            out += rest[..<open]
            let tail = rest[open...]
            if let (token, value) = values.first(where: { tail.hasPrefix($0.key) }) {
                out += value
                rest = tail.dropFirst(token.count)
            } else {
                out += "{"
                rest = tail.dropFirst()
            }
        }
        out += rest
        if !template.contains("{input}") && !input.isEmpty {
            out += "\n\n" + input
        }
        return out
    }

    /// `{something}` placeholders the template uses that are not known.
    public static func unknownPlaceholders(in template: String) -> [String] {
        var found: [String] = []
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            let token = String(rest[open...close])
            let inner = token.dropFirst().dropLast()
            if !inner.isEmpty, inner.allSatisfy({ $0.isLetter || $0 == "_" }), !placeholders.contains(token) {
                found.append(token)
            }
            rest = rest[rest.index(after: open)...]
        }
        return found
    }

    /// Whether the template needs input text to make sense.
    public static func needsInput(_ template: String) -> Bool {
        template.contains("{input}")
    }
}
