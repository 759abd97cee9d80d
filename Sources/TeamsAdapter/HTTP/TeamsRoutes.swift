import Foundation
public import Hummingbird
import Logging
import NIOCore
import RelayCore
import RelayPlatform

/// Activities over HTTP: `POST /teams/messages`, the bot's messaging endpoint.
///
/// The `Authorization: Bearer` token is verified before the body is read
/// (`TeamsTokenValidator`): an unsigned or forged request costs no read and no decode. Then the
/// body is read up to `maxBody` (413 beyond), decoded (400 naming the field), held to the token
/// (the key endorsed for its channel, the token's `serviceurl` its `serviceUrl`) and handed to
/// `TeamsInbound`, which stores it and answers at once — well inside the Bot Connector's 15 s;
/// the answer follows through the outbox. Any refused token is 401 `{"error": …}` and nothing runs.
struct TeamsRoutes: Sendable {
    /// Where the Bot Connector POSTs activities, under the relay's public URL.
    static let path = "/teams/messages"
    /// A Teams message is at most about 28 KB, and a message action carries the message it was
    /// run on, rich text and all: twice a message's text in any script, plus the activity's
    /// envelope (ids, names, channel data), which 16 KiB holds.
    static let maxBody = RequestBodyLimit.derived(characters: 2 * 28_000, other: 16 * 1024)

    let validator: TeamsTokenValidator
    let inbound: TeamsInbound
    let logger: Logger

    func add(to router: Router<some RequestContext>) {
        router.group("teams").post("messages") { request, _ in
            let accepted: TeamsTokenValidator.Accepted
            do throws(TeamsAuthError) {
                accepted = try await validator.validate(authorization: request.headers[.authorization])
            } catch {
                return refused(error)
            }
            var request = request
            let body = try await request.collectBody(limitedTo: Self.maxBody)
            let activity: TeamsActivity
            do throws(PayloadProblem) {
                activity = try PayloadDecoding.json(TeamsActivity.self, from: body.readableBytesView, as: "activity")
            } catch {
                return Self.json(["error": .string(error.description)], status: .badRequest)
            }
            do throws(TeamsAuthError) {
                try validator.check(accepted, activity: activity)
            } catch {
                return refused(error)
            }
            switch await inbound.activity(activity) {
            case .ok(let answer): return Self.json(answer)
            case .unhandledInvoke(let message): return Self.json(["error": .string(message)], status: .notImplemented)
            case .badRequest(let message): return Self.json(["error": .string(message)], status: .badRequest)
            }
        }
    }

    private func refused(_ error: TeamsAuthError) -> Response {
        logger.notice("teams: refused a request", metadata: ["reason": "\(error.description)"])
        return Self.json(["error": .string(error.description)], status: error.status)
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.encoded())))
    }
}

/// Why a request's token is refused: 401, or 503 while the Bot Connector's keys cannot be had
/// (the Bot Connector tries again). Worded for the operator; never the token.
enum TeamsAuthError: Error, Sendable, Hashable, CustomStringConvertible {
    case missing
    case notBearer
    case malformed(String)
    case unknownKey
    case keysUnavailable(String)
    case badSignature
    case wrongIssuer
    case wrongAudience
    case expired
    case notYetValid
    case notEndorsed
    case serviceURLMismatch
    case serviceURLNotAllowed

    var status: HTTPResponse.Status {
        if case .keysUnavailable = self { return .serviceUnavailable }
        return .unauthorized
    }

    var description: String {
        switch self {
        case .missing: "No Authorization header: the Bot Connector signs every request with a bearer token."
        case .notBearer: "The Authorization header is not `Bearer <token>`."
        case .malformed(let reason): "The token is refused: \(reason)."
        case .unknownKey: "The token is refused: it is signed with a key the Bot Connector does not publish."
        case .keysUnavailable(let reason): "The Bot Connector's signing keys could not be fetched (\(reason)); try again later."
        case .badSignature: "The token is refused: its signature does not match."
        case .wrongIssuer: "The token is refused: it was not issued by the Bot Connector."
        case .wrongAudience: "The token is refused: it is for another bot (its audience is not TEAMS_APP_ID)."
        case .expired: "The token is refused: it has expired."
        case .notYetValid: "The token is refused: it is not valid yet."
        case .notEndorsed: "The token is refused: its key is not endorsed for the activity's channel."
        case .serviceURLMismatch: "The token is refused: it names another serviceUrl than the activity's."
        case .serviceURLNotAllowed: "The activity's serviceUrl must be https."
        }
    }
}
