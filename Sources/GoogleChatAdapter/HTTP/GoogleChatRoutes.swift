import Foundation
import Hummingbird
import Logging
import NIOCore
import RelayCore
import RelayPipeline
import RelayPlatform

/// Interaction events over HTTP: `POST /google-chat/events`, the app's HTTP endpoint.
///
/// The `Authorization: Bearer` token is verified before the body is read
/// (`GoogleChatTokenValidator`): an unsigned or forged request costs no read and no decode
/// (401; 503 while Google's certificates cannot be fetched). Then the body is read up to
/// `maxBody` (413 beyond), decoded (400 naming the field) and handed to `GoogleChatInbound`,
/// which stores what it runs. The request then waits, up to `GoogleChatEventAnswers.window`,
/// for a reply ready in time: it answers with that message, once the outbox has recorded it as
/// sent (so a resend after a crash cannot show it twice), or with `{}` and the reply follows
/// through the Chat API.
struct GoogleChatRoutes: Sendable {
    static let path = "/google-chat/events"
    /// A Google Chat message is at most 32 000 bytes, and an event carries one, plus the space,
    /// the user and the annotations, which 16 KiB holds.
    static let maxBody = RequestBodyLimit.derived(characters: 32_000, other: 16 * 1024)
    /// How long an answer handed over waits for the outbox to record it as sent.
    static let commitWait: Duration = .seconds(2)

    let validator: GoogleChatTokenValidator
    let inbound: GoogleChatInbound
    let answers: GoogleChatEventAnswers
    let inbox: any RelayInbox
    let logger: Logger

    func add(to router: Router<some RequestContext>) {
        router.group("google-chat").post("events") { request, _ in
            do throws(GoogleChatAuthError) {
                try await validator.validate(authorization: request.headers[.authorization])
            } catch {
                logger.notice("google-chat: refused a request", metadata: ["reason": "\(error.description)"])
                return Self.json(["error": .string(error.description)], status: error.isUnavailable ? .serviceUnavailable : .unauthorized)
            }
            var request = request
            let body = try await request.collectBody(limitedTo: Self.maxBody)
            let event: GoogleChatEvent
            do throws(PayloadProblem) {
                event = try PayloadDecoding.json(GoogleChatEvent.self, from: body.readableBytesView, as: "event")
            } catch {
                return Self.json(["error": .string(error.description)], status: .badRequest)
            }
            let slot = answers.open()
            switch await inbound.event(event, slot: slot) {
            case .now(let answer):
                answers.close(slot)
                return Self.json(answer)
            case .badRequest(let message):
                answers.close(slot)
                return Self.json(["error": .string(message)], status: .badRequest)
            case .submitted:
                guard let handed = await answers.wait(slot) else { return Self.json([:]) }
                await recorded(handed.entryID)
                return Self.json(handed.body)
            }
        }
    }

    /// Waits, up to `commitWait`, until the outbox has recorded entry `id` as sent.
    private func recorded(_ id: String) async {
        let deadline = ContinuousClock.now + Self.commitWait
        while ContinuousClock.now < deadline {
            if let entry = try? await inbox.outboxEntry(id: id), entry.state != .pending { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
        logger.warning("google-chat: an answer went back before the outbox recorded it", metadata: ["entry": "\(id)"])
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.encoded())))
    }
}
