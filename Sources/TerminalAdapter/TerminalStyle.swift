import Foundation

/// How the terminal's text is dressed: colour where the output is a terminal that shows it and
/// the user has not asked for none (`NO_COLOR`, no-color.org), plain text everywhere else — a
/// pipe, a file, a test, `TERM=dumb`.
public struct TerminalStyle: Sendable, Hashable {
    public var colors: Bool

    public init(colors: Bool) {
        self.colors = colors
    }

    public static let plain = TerminalStyle(colors: false)

    /// Colour when `descriptor` is a terminal, `TERM` is set and not `dumb`, and `NO_COLOR` is
    /// unset or empty.
    public static func detect(descriptor: Int32, environment: [String: String]? = nil) -> TerminalStyle {
        detect(isTerminal: isatty(descriptor) == 1, environment: environment ?? ProcessInfo.processInfo.environment)
    }

    /// The same, for output that is a terminal or not.
    public static func detect(isTerminal: Bool, environment: [String: String]) -> TerminalStyle {
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        let term = environment["TERM"] ?? ""
        return TerminalStyle(colors: isTerminal && !noColor && !term.isEmpty && term != "dumb")
    }

    /// A heading: bold, and red for an error.
    func heading(_ text: String, error: Bool) -> String {
        colors ? (error ? "\u{1B}[1;31m" : "\u{1B}[1m") + text + "\u{1B}[0m" : text
    }

    /// Small print: the footer, dissent and notes, dimmed.
    func dim(_ text: String) -> String {
        colors ? "\u{1B}[2m" + text + "\u{1B}[0m" : text
    }
}
