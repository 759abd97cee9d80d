public import Foundation
import Hummingbird
import NIOCore
public import RelayCore

/// One request the fake received, as it arrived.
public struct RecordedRequest: Sendable, Hashable {
    /// `GET`, `POST`, …
    public var method: String
    /// The path without the query, e.g. `/keyboard/quick`.
    public var path: String
    /// The query string without `?`, if any.
    public var query: String?
    /// Header names lower-cased; repeated headers joined with ", ".
    public var headers: [String: String]
    /// The body parsed as JSON; nil when empty or not JSON.
    public var body: JSONValue?
    /// The body as text, exactly as received.
    public var rawBody: String
    /// When it arrived (the wall clock, to compare with a peer's own timestamps).
    public var receivedAt: Date

    /// Creates a record; the fake does this for every request.
    public init(
        method: String, path: String, query: String? = nil, headers: [String: String], body: JSONValue?,
        rawBody: String, receivedAt: Date = Date()
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.rawBody = rawBody
        self.receivedAt = receivedAt
    }

    /// A header by name, case-insensitively.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }

    /// A top-level member of the JSON body, e.g. `request["k"]?.intValue`.
    public subscript(field: String) -> JSONValue? {
        body?[field]
    }
}

extension RecordedRequest {
    /// Reads a request the way every fake records it: whole body, headers by lower-cased
    /// name (repeats joined with ", "), JSON parsed when it is JSON.
    static func read(_ request: Request) async throws -> RecordedRequest {
        var request = request
        // 64 MB: a voice note at a raised cap (the bench's 30 MB notes) is read whole.
        let buffer = try await request.collectBody(upTo: 64 * 1024 * 1024)
        var headers: [String: String] = [:]
        for field in request.headers {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
        }
        return RecordedRequest(
            method: request.method.rawValue,
            path: request.uri.path,
            query: request.uri.query,
            headers: headers,
            body: buffer.readableBytes == 0 ? nil : JSONValue.parse(buffer.readableBytesView),
            rawBody: String(buffer: buffer))
    }
}
