import Foundation
public import Hummingbird
public import RelayCore

/// Decoding helpers shared by the payload types: JSON and form bodies, with failures turned
/// into `SlackPayloadError`s that name the field at fault.
enum SlackPayloadDecoding {
    static func json<T: Decodable>(_ type: T.Type, from body: some Collection<UInt8>, as payload: SlackPayloadError.Payload) throws(SlackPayloadError) -> T {
        do {
            return try PayloadDecoding.json(type, from: body, as: payload.rawValue)
        } catch {
            throw SlackPayloadError(payload, error.problem)
        }
    }

    /// Decodes `application/x-www-form-urlencoded` (values percent-decoded, `+` read as space).
    static func form<T: Decodable>(_ type: T.Type, from body: some Collection<UInt8>, as payload: SlackPayloadError.Payload) throws(SlackPayloadError) -> T {
        do {
            return try PayloadDecoding.form(type, from: body, as: payload.rawValue)
        } catch {
            throw SlackPayloadError(payload, error.problem)
        }
    }
}

extension KeyedDecodingContainer {
    /// An optional string, with "" read as absent (forms send `enterprise_id=` for "none").
    func nonEmptyString(forKey key: Key) throws -> String? {
        guard let value = try decodeIfPresent(String.self, forKey: key), !value.isEmpty else { return nil }
        return value
    }

    /// A string that must be there and not be empty.
    func requiredString(forKey key: Key) throws -> String {
        let value = try decode(String.self, forKey: key)
        guard !value.isEmpty else {
            throw DecodingError.valueNotFound(String.self, .init(codingPath: codingPath + [key], debugDescription: "empty"))
        }
        return value
    }
}

/// A request body from Slack that could not be read: not the expected form or JSON, or missing
/// a field the adapter needs.
///
/// Surfaces as HTTP 400 with `{"error": "<description>"}` and `X-Slack-No-Retry: 1` (the same
/// body can only fail again). The body is checked only after its signature, so the message
/// may say what was wrong in detail.
public struct SlackPayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which kind of body it was.
    public enum Payload: String, Sendable, Hashable {
        case slashCommand = "slash command"
        case events = "Events API body"
        case interaction = "interactivity body"
    }

    public var payload: Payload
    /// What was wrong, for the sender and the log ("missing field `team_id`").
    public var problem: String

    public init(_ payload: Payload, _ problem: String) {
        self.payload = payload
        self.problem = problem
    }

    public var description: String { "\(payload.rawValue): \(problem)" }
}

extension SlackPayloadError: HTTPResponseError {
    public var status: HTTPResponse.Status { .badRequest }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        SlackErrorResponse.json(status: status, error: description, noRetry: true)
    }
}

/// Turns the text of an incoming Slack message into the plain text a user sees and a model
/// should read.
///
/// Slack sends message text with its control sequences (`<@U123>`, `<#C1|general>`,
/// `<https://x|label>`, `<!here>`) and with `&`, `<`, `>` escaped as `&amp;`, `&lt;`, `&gt;`.
public enum SlackIncomingText {
    /// Strips a leading mention (the bot's, in an `app_mention`) and normalises the rest.
    ///
    /// Only a mention at the very start is removed: `<@UBOT> translate fr hi` is
    /// `translate fr hi`, while a mention later in the text is kept as `@U123`.
    public static func normalizeMention(_ text: String, botUserID: String? = nil) -> String {
        var rest = Substring(text).drop(while: \.isWhitespace)
        if rest.hasPrefix("<@"), let close = rest.firstIndex(of: ">") {
            let id = rest[rest.index(rest.startIndex, offsetBy: 2)..<close].prefix { $0 != "|" }
            if botUserID.map({ id == $0 }) ?? true {
                rest = rest[rest.index(after: close)...]
            }
        }
        return normalize(String(rest)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The users `text` mentions (`<@U123>`, `<@U123|ann>`), each as `normalize` shows it
    /// (`@U123`, `@ann`) with their id: what `/admin grant @ann` is resolved against.
    public static func mentions(in text: String) -> [MentionedUser] {
        var found: [MentionedUser] = []
        var rest = Substring(text)
        while let open = rest.range(of: "<@") {
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: ">") else { break }
            let inside = after[..<close]
            let id = String(inside.prefix { $0 != "|" })
            if !id.isEmpty, id.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) {
                found.append(MentionedUser(shown: plain(control: ("@" + inside).unicodeScalars[...]), id: id))
            }
            rest = after[after.index(after: close)...]
        }
        return found
    }

    /// Replaces Slack's control sequences with plain text and unescapes `&lt;`, `&gt;`, `&amp;`.
    ///
    /// - `<https://x|label>` → `label (https://x)`, or just `label` when the label is the
    ///   address itself (Slack links a typed `example.com` as `<http://example.com|example.com>`);
    ///   `<https://x>` → `https://x`; `<mailto:a@b.c|a@b.c>` → `a@b.c`.
    /// - `<@U123>` → `@U123`, `<@U123|ann>` → `@ann`; `<#C1|general>` → `#general`, `<#C1>` → `#C1`.
    /// - `<!here>` → `@here` (likewise `channel`, `everyone`); `<!subteam^S1|@devs>` → `@devs`;
    ///   `<!date^…|fallback>` → `fallback`.
    ///
    /// One pass, so an escaped `&amp;lt;` becomes `&lt;` and never `<`. It reads Unicode scalars,
    /// not characters: a `<` glued to a neighbour in one grapheme cluster is still a `<`.
    public static func normalize(_ text: String) -> String {
        let scalars = Substring(text).unicodeScalars
        var out = String.UnicodeScalarView()
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            if scalar == "<", let close = scalars[index...].firstIndex(of: ">") {
                out.append(contentsOf: plain(control: scalars[scalars.index(after: index)..<close]).unicodeScalars)
                index = scalars.index(after: close)
            } else if scalar == "&", let (replacement, next) = entity(in: scalars, at: index) {
                out.append(replacement)
                index = next
            } else {
                out.append(scalar)
                index = scalars.index(after: index)
            }
        }
        return String(out)
    }

    /// The text of one `<…>` sequence (without its brackets).
    private static func plain(control: Substring.UnicodeScalarView) -> String {
        let target: Substring.UnicodeScalarView
        let label: String?
        if let bar = control.firstIndex(of: "|") {
            target = control[..<bar]
            let text = unescape(control[control.index(after: bar)...])
            label = text.isEmpty ? nil : text
        } else {
            target = control
            label = nil
        }
        let targetText = String(String.UnicodeScalarView(target))
        switch target.first {
        case "@":
            return label.map { $0.hasPrefix("@") ? $0 : "@" + $0 } ?? targetText
        case "#":
            return "#" + (label ?? String(String.UnicodeScalarView(target.dropFirst())))
        case "!":
            if let label { return label }
            let special = target.dropFirst()
            let name = String(String.UnicodeScalarView(special.prefix { $0 != "^" }))
            let team = String(String.UnicodeScalarView(special.drop { $0 != "^" }.dropFirst()))
            return "@" + (name == "subteam" ? team : name)
        default:
            let address = unescape(target)
            guard let label else { return address }
            return sameAddress(label, address) ? label : "\(label) (\(address))"
        }
    }

    /// Whether a link's label just repeats its address, give or take the scheme.
    private static func sameAddress(_ label: String, _ address: String) -> Bool {
        func bare(_ value: String) -> Substring {
            var value = Substring(value)
            if let scheme = value.range(of: "://") {
                value = value[scheme.upperBound...]
            } else if value.lowercased().hasPrefix("mailto:") || value.lowercased().hasPrefix("tel:") {
                value = value[value.index(after: value.firstIndex(of: ":")!)...]
            }
            return value.hasSuffix("/") ? value.dropLast() : value
        }
        return bare(label) == bare(address)
    }

    private static func unescape(_ text: Substring.UnicodeScalarView) -> String {
        var out = String.UnicodeScalarView()
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == "&", let (replacement, next) = entity(in: text, at: index) {
                out.append(replacement)
                index = next
            } else {
                out.append(text[index])
                index = text.index(after: index)
            }
        }
        return String(out)
    }

    /// The scalar an entity at `index` stands for, and where the text after it starts.
    private static func entity(in text: Substring.UnicodeScalarView, at index: String.Index) -> (Unicode.Scalar, String.Index)? {
        for (name, scalar) in [("&amp;", Unicode.Scalar("&")), ("&lt;", "<"), ("&gt;", ">")] where text[index...].starts(with: name.unicodeScalars) {
            return (scalar, text.index(index, offsetBy: name.unicodeScalars.count))
        }
        return nil
    }
}
