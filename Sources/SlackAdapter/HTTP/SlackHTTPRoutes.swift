import Crypto
public import Hummingbird
import Logging
public import NIOCore
public import RelayCore
public import RelayPlatform

public import struct Foundation.Date

/// Slack over HTTP: `POST /slack/commands`, `/slack/events`, `/slack/interactive`.
///
/// Every request's signature headers are checked before its body is read (missing, malformed,
/// stale or future-dated → 401, and the body is never read); the body is then read up to
/// the route's cap, derived from Slack's own limits (beyond it → 413), and verified on its raw bytes before anything is
/// parsed (forged → 401 and nothing runs), then decoded (malformed → 400 saying what was wrong),
/// handed to `SlackInbound`, and acknowledged at once — well inside Slack's 3 seconds; the
/// answer follows through the outbox.
public struct SlackHTTPRoutes: Sendable {
    /// A slash command's form: its `text` is a message, at most Slack's 40 000 characters,
    /// URL-encoded; 8 KiB holds the other fields (ids, names, the `response_url`, the
    /// `trigger_id`). 488 KiB.
    static let maxCommandBody = RequestBodyLimit.derived(characters: SlackLimits.messageText, other: 8 * 1024)
    /// An event: a message of 40 000 characters twice (its `text`, and the same words in its
    /// `rich_text` blocks), JSON-escaped; 64 KiB holds the envelope, `authorizations` and the
    /// blocks' structure. 1 MiB.
    static let maxEventBody = RequestBodyLimit.derived(characters: 2 * SlackLimits.messageText, other: 64 * 1024)
    /// A button's payload: JSON (escaped) inside a form (URL-encoded), holding the relay's own
    /// message — whose text, blocks and their fallback the renderer keeps under 16 000 characters
    /// (`SlackLimits.preferredMessageText`, a title, a footer and notes, twice) — at up to 16 bytes
    /// a character (a `\uXXXX` escape's backslash URL-encoded). 32 KiB holds the rest. 282 KiB.
    static let maxInteractionBody = 16_000 * 16 + 32 * 1024

    let verifier: SlackRequestVerifier
    let inbound: SlackInbound

    public init(verifier: SlackRequestVerifier, inbound: SlackInbound) {
        self.verifier = verifier
        self.inbound = inbound
    }

    public func add(to router: Router<some RequestContext>) {
        let slack = router.group("slack")
        slack.post("commands") { request, context in
            let body = try await verifiedBody(request, context, limit: Self.maxCommandBody)
            let command = try SlackSlashCommand.decode(form: body.readableBytesView)
            return Self.json(await inbound.slashCommand(command))
        }
        slack.post("events") { request, context in
            let body = try await verifiedBody(request, context, limit: Self.maxEventBody)
            switch try SlackEventsRequest.decode(body.readableBytesView) {
            case .urlVerification(let challenge):
                return Self.json(SlackAck.challenge(challenge))
            case .eventCallback(let callback):
                try await inbound.eventCallback(callback)
                return Response(status: .ok)
            case .other:
                return Response(status: .ok)
            }
        }
        slack.post("interactive") { request, context in
            let body = try await verifiedBody(request, context, limit: Self.maxInteractionBody)
            try await inbound.interaction(try SlackInteraction.decode(form: body.readableBytesView))
            return Response(status: .ok)
        }
    }

    /// The whole body, once its signature and timestamp check out: the headers first, so a
    /// request that cannot be Slack's is refused before its body costs anything.
    private func verifiedBody(_ request: Request, _ context: some RequestContext, limit: Int) async throws -> ByteBuffer {
        let signed = try verifier.checkHeaders(request.headers)
        var request = request
        let body = try await request.collectBody(limitedTo: limit)
        try verifier.verify(signed, body: body)
        return body
    }

    static func json(_ value: JSONValue) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.encoded())))
    }
}

/// Immediate answers to Slack's HTTP requests, sent within its 3-second deadline.
public enum SlackAck {
    /// The slash-command answer sent while the real one is computed: ephemeral, so the
    /// channel is not disturbed by it.
    public static func workingOnIt(_ text: String = "Working on it…") -> JSONValue {
        ["response_type": .string(SlackResponseType.ephemeral.rawValue), "text": .string("⏳ " + SlackMrkdwn.escape(text))]
    }

    /// The slash-command answer when the command was not accepted (busy, or the store failed):
    /// ephemeral, saying what happened and what to do.
    public static func refused(_ text: String) -> JSONValue {
        ["response_type": .string(SlackResponseType.ephemeral.rawValue), "text": .string(SlackMrkdwn.escape(text))]
    }

    /// The answer to the Events API `url_verification` handshake.
    public static func challenge(_ challenge: String) -> JSONValue {
        ["challenge": .string(challenge)]
    }
}

/// The JSON error bodies the Slack routes answer with.
enum SlackErrorResponse {
    /// `{"error": "<message>"}` with the given status; `noRetry` adds `X-Slack-No-Retry: 1`, which
    /// stops Slack from redelivering an event that can only fail again.
    static func json(status: HTTPResponse.Status, error message: String, noRetry: Bool = false) -> Response {
        let body: JSONValue = ["error": .string(message)]
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if noRetry { headers[SlackHeaders.noRetry] = "1" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.encoded())))
    }
}

/// Checks that an HTTP request really comes from Slack: its `X-Slack-Signature` is the
/// HMAC-SHA256 of `v0:<timestamp>:<raw body>` under the app's signing secret, and its
/// `X-Slack-Request-Timestamp` is within five minutes of now (either way, so neither replayed
/// nor future-dated requests pass).
///
/// Verify the raw body bytes before decoding them: re-encoding a parsed body would not match.
public struct SlackRequestVerifier: Sendable {
    /// Slack's replay window, in seconds, as its SDKs apply it.
    public static let defaultTolerance = 300

    private let key: SymmetricKey
    /// The largest accepted |now − timestamp|, in seconds.
    public let tolerance: Int
    private let now: @Sendable () -> Date

    /// - Parameters:
    ///   - signingSecret: the app's signing secret (Basic Information › App Credentials).
    ///   - tolerance: the largest accepted clock difference, in seconds.
    ///   - now: the clock; tests pass a fixed one.
    public init(signingSecret: String, tolerance: Int = defaultTolerance, now: @escaping @Sendable () -> Date = { Date() }) {
        self.key = SymmetricKey(data: Array(signingSecret.utf8))
        self.tolerance = tolerance
        self.now = now
    }

    /// Verifies a request from its headers (`SlackHeaders.requestTimestamp`, `.signature`) and
    /// its whole, unparsed body.
    public func verify(headers: HTTPFields, body: ByteBuffer) throws(SlackVerificationError) {
        try verify(checkHeaders(headers), body: Array(body.readableBytesView))
    }

    /// Verifies the two header values (nil when the header is absent) against the raw body.
    public func verify(timestamp: String?, signature: String?, body: [UInt8]) throws(SlackVerificationError) {
        try verify(checkHeaders(timestamp: timestamp, signature: signature), body: body)
    }

    /// The checks that need only the headers: both present and well-formed, and the timestamp
    /// inside the replay window. Run before the body is read, so an unsigned or replayed
    /// request costs nothing; `verify(_:body:)` then checks the MAC over the body.
    public func checkHeaders(_ headers: HTTPFields) throws(SlackVerificationError) -> SlackSignedHeaders {
        try checkHeaders(timestamp: headers[SlackHeaders.requestTimestamp], signature: headers[SlackHeaders.signature])
    }

    func checkHeaders(timestamp: String?, signature: String?) throws(SlackVerificationError) -> SlackSignedHeaders {
        guard let timestamp else { throw .missingTimestamp }
        guard let seconds = Self.parseTimestamp(timestamp) else { throw .malformedTimestamp }
        guard let signature else { throw .missingSignature }
        guard let mac = Self.parseSignature(signature) else { throw .malformedSignature }

        let skew = Int(now().timeIntervalSince1970.rounded(.down)) - seconds
        if skew > tolerance { throw .staleTimestamp(secondsOld: skew) }
        if -skew > tolerance { throw .futureTimestamp(secondsAhead: -skew) }
        return SlackSignedHeaders(timestamp: timestamp, mac: mac)
    }

    /// Checks the signature the headers carry against the raw body.
    public func verify(_ signed: SlackSignedHeaders, body: ByteBuffer) throws(SlackVerificationError) {
        try verify(signed, body: Array(body.readableBytesView))
    }

    func verify(_ signed: SlackSignedHeaders, body: [UInt8]) throws(SlackVerificationError) {
        // isValidAuthenticationCode compares in constant time.
        guard HMAC<SHA256>.isValidAuthenticationCode(signed.mac, authenticating: Self.baseString(timestamp: signed.timestamp, body: body), using: key)
        else {
            throw .signatureMismatch
        }
    }

    private static func baseString(timestamp: String, body: [UInt8]) -> [UInt8] {
        Array("v0:\(timestamp):".utf8) + body
    }

    /// Digits only (no sign, no spaces), and short enough not to overflow.
    private static func parseTimestamp(_ value: String) -> Int? {
        guard (1...12).contains(value.utf8.count), value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int(value)
    }

    /// `v0=` followed by the 32-byte MAC in hex.
    private static func parseSignature(_ value: String) -> [UInt8]? {
        guard value.hasPrefix("v0=") else { return nil }
        return Hex.decode(value.dropFirst(3), count: 32)
    }
}

extension SlackRequestVerifier: CustomStringConvertible {
    /// Says nothing of the secret, so a verifier can be logged or interpolated safely.
    public var description: String { "SlackRequestVerifier(tolerance: \(tolerance) s)" }
}

/// A request's signature headers, present, well-formed and fresh, waiting for the body they sign.
public struct SlackSignedHeaders: Sendable {
    let timestamp: String
    let mac: [UInt8]
}

/// Why a request was not accepted as coming from Slack: 401 with `{"error":"invalid request"}`,
/// whatever the reason.
public typealias SlackVerificationError = WebhookVerificationError<SlackRequestVerifier>

extension SlackRequestVerifier: WebhookProof {
    public static let signatureHeader = SlackHeaders.signature
    public static let signatureForm = "v0= and 64 hex digits"
    public static let timestampHeader: HTTPFields.Element.Name? = SlackHeaders.requestTimestamp
    public static let credential = "signing secret"
    public static let answer = "invalid request"
}
