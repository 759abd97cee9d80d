import CoreMetrics
public import Foundation
public import Logging

/// Decoding what a platform sends into the adapter's `Decodable` models of the platform's own
/// shapes, with one way to say what was wrong: every adapter reads its payloads through here, so
/// a renamed or mistyped field fails at decoding, naming the field, instead of deep in a handler.
///
/// Models decode tolerantly where the platform is: unknown keys are ignored (JSONDecoder does),
/// fields a platform may leave out are optional. What the relay cannot act without is required.
public enum PayloadDecoding {
    /// Decodes a JSON body, or throws a `PayloadProblem` naming the field at fault.
    public static func json<T: Decodable>(_ type: T.Type, from body: some Collection<UInt8>, as payload: String) throws(PayloadProblem) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(body))
        } catch let error as DecodingError {
            throw PayloadProblem(payload, describe(error, json: true))
        } catch {
            throw PayloadProblem(payload, "unreadable JSON (\(error))")
        }
    }

    /// Decodes an `application/x-www-form-urlencoded` body (`FormDecoder`), or throws a
    /// `PayloadProblem` naming the field at fault.
    public static func form<T: Decodable>(_ type: T.Type, from body: some Collection<UInt8>, as payload: String) throws(PayloadProblem) -> T {
        do {
            return try FormDecoder.decode(type, from: body)
        } catch let error as DecodingError {
            throw PayloadProblem(payload, describe(error, json: false))
        } catch let error as FormDecoder.Failure {
            // Never the value itself, which may be a `response_url` (a credential): the field at most.
            switch error {
            case .badPercentEncoding: throw PayloadProblem(payload, "a key or value is not valid percent-encoding")
            case .notUTF8: throw PayloadProblem(payload, "the form body is not UTF-8")
            case .duplicate(let name): throw PayloadProblem(payload, "field `\(name)` appears more than once")
            }
        } catch {
            throw PayloadProblem(payload, "not a valid form body (\(error))")
        }
    }

    /// "missing field `event.channel`", "field `team_id` is not a string"… Never the value
    /// itself, which may be a credential (a `response_url`, a token): the field at most.
    public static func describe(_ error: DecodingError, json: Bool = true) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "missing field `\(path(context.codingPath + [key]))`"
        case .valueNotFound(_, let context):
            return "field `\(path(context.codingPath))` is null or empty"
        case .typeMismatch(let type, let context):
            if context.codingPath.isEmpty { return "the payload is not \(typeName(type))" }
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

    /// Counts and logs a payload that arrived on a socket or a poll, where there is no request to
    /// answer 400: it is dropped (the connection and the other payloads go on).
    /// `relay_inbound_dropped_total{platform, payload}`; both labels are fixed names.
    public static func dropped(_ problem: PayloadProblem, platform: String, logger: Logger) {
        logger.warning(
            "platform payload dropped: it does not decode",
            metadata: ["platform": "\(platform)", "payload": "\(problem.payload)", "problem": "\(problem.problem)"])
        Counter(label: droppedMetric, dimensions: [("platform", platform), ("payload", problem.payload)]).increment()
    }

    /// The name of the counter `dropped` increments.
    public static let droppedMetric = "relay_inbound_dropped_total"

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { key in key.intValue.map { "[\($0)]" } ?? key.stringValue }
            .joined(separator: ".")
            .replacingOccurrences(of: ".[", with: "[")
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is Double.Type: "a number"
        case is Bool.Type: "a Boolean"
        case is [Any].Type: "an array"
        default: "an object"
        }
    }
}

/// A platform payload that could not be read: which kind of payload ("Discord interaction"), and
/// what was wrong with it ("missing field `data.name`"). Each adapter answers it as the platform
/// expects a 400 (its own error body); on a socket or a poll it is `PayloadDecoding.dropped`.
public struct PayloadProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public var payload: String
    public var problem: String

    public init(_ payload: String, _ problem: String) {
        self.payload = payload
        self.problem = problem
    }

    public var description: String { "\(payload): \(problem)" }
}

extension KeyedDecodingContainer {
    /// The member `key` as `T`, or nil when it is absent, null or of another shape: for what a
    /// handler can do without, read so that an odd value there never makes the payload unreadable.
    public func lenient<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
        (try? decodeIfPresent(type, forKey: key)) ?? nil
    }
}

/// An element read if it can be, nil if not: one odd element of a list (`[Lenient<Entity>]`)
/// leaves the others readable.
public struct Lenient<Value: Decodable>: Decodable {
    public var value: Value?

    public init(from decoder: any Decoder) throws {
        value = try? Value(from: decoder)
    }
}
