import Mustache
public import RelayCore

/// HTML for the console: text escaped one Unicode scalar at a time, and Mustache templates that
/// escape that way.
///
/// Mustache's own HTML escaping compares `Character`s, so a grapheme cluster holding a `<` or a
/// `"` beside a combining mark or a "Prepend" scalar (`"\u{600}<script>"`, `"\"\u{301}"`) passes
/// unescaped — and a browser, which reads scalars, sees a tag or the end of an attribute
/// (`ScalarEscaper` says more). Every template therefore starts with the pragma
/// `{{% CONTENT_TYPE: SCALAR_HTML}}`, which makes `{{value}}` escape with ``escape(_:)``
/// (ConsoleTemplatesTests checks each one does).
enum ConsoleHTML {
    static let escaper = ScalarEscaper(["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;"])

    /// `text` safe in HTML text and in a quoted attribute value.
    static func escape(_ text: some StringProtocol) -> String { escaper.escape(text) }

    /// A chat reply's text as HTML: escaped, its `code` spans (the way replies name commands)
    /// shown as code. The spans are found after escaping, and a backtick is never escaped, so no
    /// text can open a tag.
    static func chatText(_ text: String) -> TrustedHTML {
        var parts = escape(text).split(separator: "`", omittingEmptySubsequences: false).map(String.init)
        // A backtick left without its pair stays a backtick.
        if parts.count % 2 == 0, let last = parts.popLast() { parts[parts.count - 1] += "`" + last }
        let html = parts.enumerated().map { index, part in index % 2 == 1 ? "<code>\(part)</code>" : part }.joined()
        return TrustedHTML(html: html)
    }

    /// What every template starts with.
    static let pragma = "{{% CONTENT_TYPE: SCALAR_HTML}}"

    /// Registers the content type the pragma names (once per process; registering again is harmless).
    static let registered: Void = {
        MustacheContentTypes.register(ScalarHTMLContentType(), named: "SCALAR_HTML")
    }()

    struct ScalarHTMLContentType: MustacheContentType {
        func escapeText(_ text: String) -> String { ConsoleHTML.escape(text) }
    }
}

/// HTML the console wrote itself (a chart, a page's body): the one kind of value a template may
/// show unescaped, with `{{{name}}}` (ConsoleTemplatesTests checks which names templates use so).
struct TrustedHTML: Sendable, CustomStringConvertible {
    let html: String
    var description: String { html }
}
