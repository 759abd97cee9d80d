public import Hummingbird
import Logging
import NIOCore
import RelayCore

/// Slack over HTTP: `POST /slack/commands`, `/slack/events`, `/slack/interactive`.
///
/// Every request is verified on its raw bytes before anything is parsed (forged, stale or
/// future-dated → 401 and nothing runs), then decoded (malformed → 400 saying what was wrong),
/// handed to `SlackInbound`, and acknowledged at once — well inside Slack's 3 seconds; the
/// answer follows through the outbox.
public struct SlackHTTPRoutes: Sendable {
    /// Slack's payloads are small; anything bigger is refused before it is read.
    static let maxBody = 1 << 20

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
            await inbound.slashCommand(command)
            return Self.json(SlackAck.workingOnIt())
        }
        slack.post("events") { request, context in
            let body = try await verifiedBody(request, context)
            switch try SlackEventsRequest.decode(body.readableBytesView) {
            case .urlVerification(let challenge):
                return Self.json(SlackAck.challenge(challenge))
            case .eventCallback(let callback):
                await inbound.eventCallback(callback)
                return Response(status: .ok)
            case .other:
                return Response(status: .ok)
            }
        }
        slack.post("interactive") { request, context in
            let body = try await verifiedBody(request, context)
            await inbound.interaction(try SlackInteraction.decode(form: body.readableBytesView))
            return Response(status: .ok)
        }
    }

    /// The whole body, once its signature and timestamp check out.
    private func verifiedBody(_ request: Request, _ context: some RequestContext) async throws -> ByteBuffer {
        let body = try await request.body.collect(upTo: Self.maxBody)
        try verifier.verify(headers: request.headers, body: body)
        return body
    }

    static func json(_ value: JSONValue) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.encoded())))
    }
}
