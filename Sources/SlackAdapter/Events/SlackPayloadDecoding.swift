import Foundation
public import Hummingbird

/// Decoding helpers shared by the payload types: JSON and form bodies, with failures turned
/// into `SlackPayloadError`s that name the field at fault.
enum SlackPayloadDecoding {
    static func json<T: Decodable>(_ type: T.Type, from body: some Collection<UInt8>, as payload: SlackPayloadError.Payload) throws(SlackPayloadError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(body))
        } catch let error as DecodingError {
            throw SlackPayloadError(payload, describe(error, json: true))
        } catch {
            throw SlackPayloadError(payload, "unreadable JSON (\(error))")
        }
    }

    /// Decodes `application/x-www-form-urlencoded` (values percent-decoded, `+` read as space).
    static func form<T: Decodable>(_ type: T.Type, from body: some Collection<UInt8>, as payload: SlackPayloadError.Payload) throws(SlackPayloadError) -> T {
        do {
            return try SlackFormDecoder.decode(type, from: body)
        } catch let error as DecodingError {
            throw SlackPayloadError(payload, describe(error, json: false))
        } catch let error as SlackFormDecoder.Failure {
            // Never the value itself, which may be a `response_url` (a credential): the field at most.
            switch error {
            case .badPercentEncoding: throw SlackPayloadError(payload, "a key or value is not valid percent-encoding")
            case .notUTF8: throw SlackPayloadError(payload, "the form body is not UTF-8")
            case .duplicate(let name): throw SlackPayloadError(payload, "field `\(name)` appears more than once")
            }
        } catch {
            throw SlackPayloadError(payload, "not a valid form body (\(error))")
        }
    }

    /// "missing field `event.channel`", "field `team_id` is not a string"…
    static func describe(_ error: DecodingError, json: Bool) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "missing field `\(path(context.codingPath + [key]))`"
        case .valueNotFound(_, let context):
            return "field `\(path(context.codingPath))` is null or empty"
        case .typeMismatch(let type, let context):
            return "field `\(path(context.codingPath))` is not \(typeName(type))"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return json ? "not valid JSON" : "not a valid form body"
            }
            return "field `\(path(context.codingPath))` is invalid"
        @unknown default:
            return "unreadable (\(error))"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { key in key.intValue.map { "[\($0)]" } ?? key.stringValue }
            .joined(separator: ".")
            .replacingOccurrences(of: ".[", with: "[")
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Double.Type: "a number"
        case is Bool.Type: "a Boolean"
        case is [Any].Type: "an array"
        default: "an object"
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

/// Reads an `application/x-www-form-urlencoded` body — Slack's slash commands and interactivity
/// posts — into a `Decodable` type with flat string fields.
///
/// Slack's forms are flat `key=value` pairs, so this does only that: split on `&` and `=`, `+` as
/// space, `%XX` escapes, UTF-8; each field once. Hummingbird's `URLEncodedFormDecoder` reads
/// nested forms too and built a tree per body: profiled, a twentieth of the relay's CPU per
/// command went to it.
enum SlackFormDecoder {
    /// What was wrong with the body itself (a field's absence or type is a `DecodingError`).
    enum Failure: Error, Equatable {
        case badPercentEncoding
        case notUTF8
        case duplicate(String)
    }

    static func decode<T: Decodable>(_ type: T.Type, from body: some Collection<UInt8>) throws -> T {
        try T(from: FieldsDecoder(fields: try fields(of: body)))
    }

    /// The body's fields, decoded.
    static func fields(of body: some Collection<UInt8>) throws(Failure) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = try unescape(parts[0])
            let value = parts.count > 1 ? try unescape(parts[1]) : ""
            guard fields.updateValue(value, forKey: name) == nil else { throw .duplicate(name) }
        }
        return fields
    }

    /// `+` as a space and `%XX` as its byte; the result must be UTF-8.
    private static func unescape(_ bytes: some Collection<UInt8>) throws(Failure) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var escaped = false
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            switch byte {
            case UInt8(ascii: "+"): out.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index != bytes.endIndex, let high = hexValue(bytes[index]) else { throw .badPercentEncoding }
                index = bytes.index(after: index)
                guard index != bytes.endIndex, let low = hexValue(bytes[index]) else { throw .badPercentEncoding }
                index = bytes.index(after: index)
                out.append(high << 4 | low)
                escaped = true
            default: out.append(byte)
            }
        }
        guard let text = String(validating: out, as: UTF8.self) else { throw escaped ? .badPercentEncoding : .notUTF8 }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A `Decoder` over flat string fields: keyed containers of strings (and what parses from one).
private struct FieldsDecoder: Decoder {
    let fields: [String: String]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(FieldsContainer<Key>(fields: fields))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "a form is flat fields"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(String.self, .init(codingPath: [], debugDescription: "a form is flat fields"))
    }
}

private struct FieldsContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: [String: String]
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { fields.keys.compactMap(Key.init(stringValue:)) }

    func contains(_ key: Key) -> Bool { fields[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { fields[key.stringValue] == nil }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        guard let value = fields[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "no such field"))
        }
        return value
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        switch try decode(String.self, forKey: key) {
        case "true", "1": return true
        case "false", "0": return false
        default: throw mismatch(Bool.self, key)
        }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let value = try decode(String.self, forKey: key)
        if let value = value as? T { return value }
        if T.self == Int.self, let number = Int(value) { return number as! T }
        throw mismatch(T.self, key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw mismatch([String: Any].self, key)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw mismatch([Any].self, key)
    }

    func superDecoder() throws -> any Decoder { FieldsDecoder(fields: fields) }

    func superDecoder(forKey key: Key) throws -> any Decoder { throw mismatch([String: Any].self, key) }

    private func mismatch(_ type: Any.Type, _ key: Key) -> DecodingError {
        .typeMismatch(type, .init(codingPath: [key], debugDescription: "a form field is a string"))
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
