public import Hummingbird
import Logging
import NIOCore
public import RelayCore
import RelayPlatform

/// Slack over HTTP: `POST /slack/commands`, `/slack/events`, `/slack/interactive`.
///
/// Every request's signature headers are checked before its body is read (missing, malformed,
/// stale or future-dated → 401, and the body is never read); the body is then read up to
/// `maxBody` (beyond it → 413) and verified on its raw bytes before anything is
/// parsed (forged → 401 and nothing runs), then decoded (malformed → 400 saying what was wrong),
/// handed to `SlackInbound`, and acknowledged at once — well inside Slack's 3 seconds; the
/// answer follows through the outbox.
public struct SlackHTTPRoutes: Sendable {
    /// Slack's payloads are small (under 100 KB); anything bigger is refused.
    static let maxBody = 128 * 1024

    let verifier: SlackRequestVerifier
    let inbound: SlackInbound

    public init(verifier: SlackRequestVerifier, inbound: SlackInbound) {
        self.verifier = verifier
        self.inbound = inbound
    }

    public func add(to router: Router<some RequestContext>) {
        let slack = router.group("slack")
        slack.post("commands") { request, context in
            let body = try await verifiedBody(request, context)
            let command = try SlackSlashCommand.decode(form: body.readableBytesView)
            return Self.json(await inbound.slashCommand(command))
        }
        slack.post("events") { request, context in
            let body = try await verifiedBody(request, context)
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
            let body = try await verifiedBody(request, context)
            try await inbound.interaction(try SlackInteraction.decode(form: body.readableBytesView))
            return Response(status: .ok)
        }
    }

    /// The whole body, once its signature and timestamp check out: the headers first, so a
    /// request that cannot be Slack's is refused before its body costs anything.
    private func verifiedBody(_ request: Request, _ context: some RequestContext) async throws -> ByteBuffer {
        let signed = try verifier.checkHeaders(request.headers)
        var request = request
        let body = try await request.collectBody(limitedTo: Self.maxBody)
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
