import RelayCore
import RelayPipeline
public import RelayPlatform

/// Why a Bot API call failed: the shared platform-call error with Telegram's refusals. Its
/// `endpoint` is the Bot API method (`sendMessage`), never a URL: the URL's path holds the bot
/// token.
public typealias TelegramAPIError = PlatformCallError<TelegramRefusal>

/// Telegram said no (`ok:false`, a 4xx).
public enum TelegramRefusal: PlatformRefusal {
    /// A 400 with `parameters.migrate_to_chat_id`: the group became a supergroup, which has a
    /// new id; the message must go there. Final for this chat id: the caller re-sends to the new one.
    case migrated(newChatID: Int64)
    /// Any other refusal: `code` is its `error_code` (else the HTTP status), `description` its
    /// text, bounded (`Bad Request: chat not found`, `Forbidden: bot was blocked by the user`).
    case error(code: Int, description: String)

    public static let platform = "Telegram"
    public static let rateLimitedPhrase = "rate limited by Telegram"

    public var label: String {
        switch self {
        case .migrated: "migrated"
        case .error(let code, _): "http_\(code)"
        }
    }

    public var reason: String {
        switch self {
        case .migrated(let newChatID):
            "the group became a supergroup; its new chat id is \(newChatID)"
        case .error(let code, let description):
            "Telegram refused it (\(code)\(description.isEmpty ? "" : " \(description)"))"
                + (Self.explanation(code: code, description: description).map { ": \($0)" } ?? "")
        }
    }

    /// 401, or the bare 404 Telegram answers every method with for a token it does not know.
    public var refusesCredentials: Bool {
        guard case .error(let code, let description) = self else { return false }
        return code == 401 || (code == 404 && description == "Not Found")
    }

    /// The refusals an operator meets most often, in words they can act on.
    static func explanation(code: Int, description: String) -> String? {
        switch code {
        case 401: "the bot token is wrong or was revoked (TELEGRAM_BOT_TOKEN)"
        // A token Telegram does not know gets a bare 404 on every method.
        case 404 where description == "Not Found": "the bot token is wrong or was revoked (TELEGRAM_BOT_TOKEN)"
        case 403: "the bot cannot write here (blocked by the user, or not a member of the group)"
        case 409: "another process is polling getUpdates, or a webhook is set"
        default: nil
        }
    }
}

extension PlatformCallError where Refusal == TelegramRefusal {
    /// An edit that would leave the message as it is: Telegram refuses it, but for the relay the
    /// message already shows what it should.
    public var isMessageNotModified: Bool {
        guard case .refused(_, .error(_, let description)) = self else { return false }
        return description.lowercased().contains("message is not modified")
    }

    /// This error with every occurrence of `token` in Telegram's own text replaced. Telegram
    /// has no reason to quote the token, but a proxy or a fake might, and the description goes
    /// to logs and the outbox.
    func redacting(_ token: TelegramToken) -> TelegramAPIError {
        guard !token.secret.isEmpty, case .refused(let endpoint, .error(let code, let description)) = self, description.contains(token.secret) else {
            return self
        }
        return .refused(endpoint: endpoint, .error(code: code, description: description.replacing(token.secret, with: "\(token)")))
    }
}
