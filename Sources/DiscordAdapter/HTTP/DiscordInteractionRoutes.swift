public import Hummingbird
public import Logging
import NIOCore
import RelayCore
import RelayPlatform

/// Discord's interactions endpoint: `POST /discord/interactions`.
///
/// The signature headers are checked for presence first (missing → 401 before the body is
/// read); the body is read up to `maxBody` (beyond it → 413) and its Ed25519
/// signature verified on the raw bytes before anything is parsed (forged, stale or missing →
/// 401 and nothing runs, as Discord's own probes expect); then it is decoded (malformed → 400),
/// handed to `DiscordInbound`, and answered at once: PONG, or a deferred response once the
/// command is committed to the inbox — well inside Discord's 3 seconds.
public struct DiscordInteractionRoutes: Sendable {
    /// One interaction, from Discord's own limits: the "Fact-check" message command's resolved
    /// message — its content (4 000 characters with Nitro) and its embeds (6 000 in all) — and the
    /// message it replies to (as much again), 20 000 characters, more than a slash command's
    /// options hold (6 000 each, at most three here); JSON-escaped; 32 KiB holds the rest (the
    /// member, the users, the attachments' metadata). 272 KiB.
    static let maxBody = RequestBodyLimit.derived(characters: 2 * (4_000 + 6_000), other: 32 * 1024)

    let verifier: DiscordRequestVerifier
    let inbound: DiscordInbound
    let logger: Logger

    public init(verifier: DiscordRequestVerifier, inbound: DiscordInbound, logger: Logger) {
        self.verifier = verifier
        self.inbound = inbound
        self.logger = logger
    }

    public func add(to router: Router<some RequestContext>) {
        router.group("discord").post("interactions") { request, _ in
            var request = request
            let headers = request.headers
            do throws(DiscordVerificationError) {
                // Refused before the body costs anything when a header is not even there.
                if headers[DiscordHeaders.signature] == nil { throw .missingSignature }
                if headers[DiscordHeaders.timestamp] == nil { throw .missingTimestamp }
            } catch {
                logger.info("discord: interaction refused", metadata: ["reason": "\(error.reason)"])
                throw error
            }
            let body = try await request.collectBody(limitedTo: Self.maxBody)
            do throws(DiscordVerificationError) {
                try verifier.verify(headers: headers, body: body)
            } catch {
                logger.info("discord: interaction refused", metadata: ["reason": "\(error.reason)"])
                throw error
            }
            let interaction: DiscordInteraction
            do throws(PayloadProblem) {
                interaction = try DiscordInteraction.decode(body.readableBytesView)
            } catch {
                logger.info("discord: interaction refused", metadata: ["reason": "\(error)"])
                return Self.json(["error": .string(error.description)], status: .badRequest)
            }
            return Self.json(await inbound.interaction(interaction))
        }
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.encoded())))
    }
}
