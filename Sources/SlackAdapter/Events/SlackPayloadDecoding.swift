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
