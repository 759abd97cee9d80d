import Crypto
public import Hummingbird
import Logging
import NIOCore
import RelayCore
public import RelayPlatform

/// Telegram's webhook: `POST /telegram/webhook`.
///
/// The secret token header is compared in constant time before a byte of the body is read
/// (missing or wrong → 401, nothing runs); the body is read up to `maxBody`
/// (beyond it → 413), must be JSON (else 415), and must be an update (else 400). The update is
/// handled — a command committed to the inbox — before the 200, so an acknowledged update is
/// never lost; when it cannot be stored the answer is 500 and Telegram delivers it again, which
/// the update's id makes harmless.
public struct TelegramWebhookRoutes: Sendable {
    /// What Telegram sends the webhook's secret in. (`HTTPFields.Element.Name` is
    /// `HTTPField.Name`, which Hummingbird does not re-export by that name.)
    public static let header = HTTPFields.Element.Name("X-Telegram-Bot-Api-Secret-Token")!
    /// One update, from Telegram's own limits: a message of 4 096 characters, the message it
    /// replies to (4 096 more) and the quote of it (1 024), in JSON that escapes what is not ASCII
    /// (`\u0444`; a character outside the BMP as two escapes); 32 KiB holds the rest (up to 100
    /// entities on each message, the users, the chat). 140 KiB.
    static let maxBody = RequestBodyLimit.derived(characters: 4_096 + 4_096 + 1_024, other: 32 * 1024)

    let secret: TelegramWebhookSecret
    let inbound: TelegramInbound
    let logger: Logger
    /// Made once, for comparing secrets: a random key per request would cost every update.
    let comparisonKey = SymmetricKey(size: .bits256)

    public func add(to router: Router<some RequestContext>) {
        router.group("telegram").post("webhook") { request, _ in
            var request = request
            do throws(TelegramVerificationError) {
                try verify(request.headers)
            } catch {
                logger.info("telegram: webhook request refused", metadata: ["reason": "\(error.reason)"])
                throw error
            }
            let type = request.headers[.contentType]?.lowercased() ?? ""
            guard type.hasPrefix("application/json") else {
                return Self.json(["error": "an update must be sent as application/json"], status: .unsupportedMediaType)
            }
            let body = try await request.collectBody(limitedTo: Self.maxBody)
            let update: TelegramUpdate
            do throws(PayloadProblem) {
                update = try TelegramUpdate.decode(body.readableBytesView)
            } catch {
                // Only a body that is not JSON, or an update without its `update_id`, gets here:
                // the rest of an update is read leniently (see `TelegramUpdate`).
                logger.info("telegram: webhook body refused", metadata: ["reason": "\(error)"])
                return Self.json(["error": .string("the body is not a Telegram update: \(error.problem)")], status: .badRequest)
            }
            do {
                try await inbound.handle(update)
            } catch let error as TelegramBotNameUnknown {
                logger.notice("telegram: an update names a bot, and this bot's name is not known yet; Telegram will deliver it again")
                return Self.json(["error": .string("\(error)")], status: .serviceUnavailable)
            } catch {
                logger.error("telegram: could not store an update; Telegram will deliver it again", metadata: ["error": "\(error)"])
                return Self.json(["error": "the update could not be stored; deliver it again"], status: .internalServerError)
            }
            return Response(status: .ok)
        }
    }

    /// The secret token header is there and is the webhook's secret.
    func verify(_ headers: HTTPFields) throws(TelegramVerificationError) {
        guard let given = headers[Self.header] else { throw .missingSignature }
        guard Self.matches(given, secret.secret, key: comparisonKey) else { throw .signatureMismatch }
    }

    /// Equal, in time that does not depend on where they differ: both are MACed under a key
    /// made for this comparison, and the codes compared by swift-crypto in constant time.
    static func matches(_ given: String, _ expected: String, key: SymmetricKey) -> Bool {
        let code = HMAC<SHA256>.authenticationCode(for: Array(expected.utf8), using: key)
        return HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: Array(given.utf8), using: key)
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.encoded())))
    }
}

/// Why a webhook request was not accepted as Telegram's: its secret token header was missing
/// (`missingSignature`) or wrong (`signatureMismatch`); 401 either way, with the same body.
public typealias TelegramVerificationError = WebhookVerificationError<TelegramWebhookRoutes>

extension TelegramWebhookRoutes: WebhookProof {
    public static var signatureHeader: HTTPFields.Element.Name { header }
    public static let credential = "webhook secret (TELEGRAM_WEBHOOK_SECRET)"
    public static let answer = "missing or wrong X-Telegram-Bot-Api-Secret-Token"
}
