public import Hummingbird
import NIOCore
import RelayCore

/// Request body caps: each platform declares its own routes' cap; this holds the small one.
///
/// Each platform declares its own routes' cap beside them, derived from the platform's own
/// limits in characters after its encoding (`derived(characters:other:)`), so a command at the
/// platform's maximum length in any script is read, and a route reads at most its cap and refuses
/// the rest with 413 before it costs memory. A platform verifies what it can from the
/// headers (signature present and well-formed, timestamp fresh) before calling
/// `collectBody(limitedTo:)`, so an unsigned flood is refused before a byte of its body is read.
public enum RequestBodyLimit {
    /// A route that expects a small JSON object (test webhooks, admin calls).
    public static let small = 16 * 1024

    /// The most bytes one character of a person's text can take in a request (issue 47, point
    /// 3): four bytes of UTF-8, each `%XX` in a URL-encoded form; or, in JSON that escapes what is
    /// not ASCII (Telegram's does), a character outside the Basic Multilingual Plane as two
    /// `\uXXXX` escapes. Either way 12.
    public static let bytesPerCharacter = 12

    /// A cap derived from a platform's own limits in characters: `characters` of text (every
    /// copy the request carries: a message's `text` and its blocks, the message it replies to),
    /// at `bytesPerCharacter` each, plus `other` bytes for everything else the request holds.
    public static func derived(characters: Int, other: Int) -> Int {
        characters * bytesPerCharacter + other
    }
}

extension Request {
    /// The whole body, at most `limit` bytes.
    ///
    /// A `Content-Length` above the limit is refused before anything is read; a body without one
    /// (chunked) is refused as soon as it grows past the limit. Either way the answer is 413 with
    /// a message that names the limit (`RequestBodyTooLarge`), and the server closes the
    /// connection instead of reading the rest.
    public mutating func collectBody(limitedTo limit: Int) async throws -> ByteBuffer {
        if let declared = headers[.contentLength], let length = Int(declared), length > limit {
            throw RequestBodyTooLarge(limit: limit, declared: length)
        }
        do {
            // Hummingbird's own collection, which stops reading once the limit is passed.
            return try await collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw RequestBodyTooLarge(limit: limit, declared: nil)
        }
    }
}

/// A request body over its route's limit: 413, `{"error": "…"}` naming the limit.
public struct RequestBodyTooLarge: Error, Sendable, Hashable, HTTPResponseError, CustomStringConvertible {
    /// The route's limit, in bytes.
    public var limit: Int
    /// The `Content-Length` the client declared, when it declared one.
    public var declared: Int?

    public init(limit: Int, declared: Int?) {
        self.limit = limit
        self.declared = declared
    }

    public var status: HTTPResponse.Status { .contentTooLarge }

    public var description: String {
        let size = declared.map { "\($0) bytes" } ?? "more than that"
        return "The request body is too large: this endpoint accepts at most \(limit) bytes, got \(size)."
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body: JSONValue = ["error": .string(description)]
        // The rest of the body is not read: the connection closes after this answer.
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8", .connection: "close"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.encoded())))
    }
}
