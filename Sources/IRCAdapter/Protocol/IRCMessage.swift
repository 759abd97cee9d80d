/// One IRC protocol message (RFC 1459 §2.3.1, with IRCv3 message tags): `@tags :source COMMAND
/// params… :trailing`, read from a line the server sent or written to one the relay sends.
///
/// Tags are skipped: the relay asks for no capability that adds any. The command is kept in
/// upper case (a numeric stays its three digits).
public struct IRCMessage: Sendable, Hashable, CustomStringConvertible {
    /// Who sent it: `nick!user@host` or a server's name; nil for a line with no source (what
    /// the relay sends).
    public var source: String?
    public var command: String
    public var parameters: [String]

    public init(source: String? = nil, _ command: String, _ parameters: [String] = []) {
        self.source = source
        self.command = command.uppercased()
        self.parameters = parameters
    }

    /// Reads one line (without its CR LF); nil when it holds no command.
    public init?(line: Substring) {
        var rest = line.drop { $0 == " " }
        if rest.hasPrefix("@") {
            rest = rest.drop { $0 != " " }.drop { $0 == " " }
        }
        var source: String?
        if rest.hasPrefix(":") {
            let word = rest.dropFirst().prefix { $0 != " " }
            source = word.isEmpty ? nil : String(word)
            rest = rest.dropFirst(word.count + 1).drop { $0 == " " }
        }
        let command = rest.prefix { $0 != " " }
        guard !command.isEmpty else { return nil }
        rest = rest.dropFirst(command.count).drop { $0 == " " }
        var parameters: [String] = []
        while !rest.isEmpty {
            if rest.hasPrefix(":") {
                parameters.append(String(rest.dropFirst()))
                break
            }
            let word = rest.prefix { $0 != " " }
            parameters.append(String(word))
            rest = rest.dropFirst(word.count).drop { $0 == " " }
        }
        self.init(source: source, String(command), parameters)
    }

    /// The nick of a `nick!user@host` source; nil for a server.
    public var nick: String? {
        guard let source, source.contains("!") || source.contains("@") || !source.contains(".") else { return nil }
        return String(source.prefix { $0 != "!" && $0 != "@" })
    }

    /// The line to send, without CR LF: the last parameter after `:` when it could not stand as
    /// a middle one. Parameters are the relay's own or cleaned already (`IRCText.cleaned`): no
    /// CR, LF or NUL reaches here.
    public var line: String {
        var words = [command]
        for (index, parameter) in parameters.enumerated() {
            let isLast = index == parameters.count - 1
            if isLast && (parameter.isEmpty || parameter.hasPrefix(":") || parameter.contains(" ")) {
                words.append(":" + parameter)
            } else {
                words.append(parameter)
            }
        }
        return words.joined(separator: " ")
    }

    public var description: String { line }
}
