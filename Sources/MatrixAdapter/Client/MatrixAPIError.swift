import RelayCore
public import RelayPlatform

/// Why a client-server API call failed: the shared platform-call error with the homeserver's
/// refusals. Its `endpoint` names the call (`send`, `sync`), never a path: paths hold room ids.
public typealias MatrixAPIError = PlatformCallError<MatrixRefusal>

/// The homeserver said no: a 4xx with the spec's error body `{"errcode":"M_…","error":"…"}`.
public struct MatrixRefusal: PlatformRefusal {
    /// The HTTP status.
    public var status: Int
    /// `M_FORBIDDEN`, `M_UNKNOWN_TOKEN`, `M_TOO_LARGE`…; `M_UNKNOWN` when the body had none.
    public var errcode: String
    /// The homeserver's `error`, one bounded line.
    public var message: String

    public static let platform = "the Matrix homeserver"

    /// `M_UNKNOWN_TOKEN`, `M_MISSING_TOKEN`, or a bare 401.
    public var refusesCredentials: Bool { errcode == "M_UNKNOWN_TOKEN" || errcode == "M_MISSING_TOKEN" || status == 401 }
    public static let rateLimitedPhrase = "rate limited by the homeserver"

    public init(status: Int, errcode: String, message: String) {
        self.status = status
        self.errcode = errcode
        self.message = message
    }

    public var label: String {
        let code = errcode.lowercased().filter { $0.isASCII && ($0.isLetter || $0 == "_") }
        return code.isEmpty || code.count > 40 ? "http_\(status)" : code
    }

    public var reason: String {
        "the homeserver refused it (\(status) \(errcode)\(message.isEmpty ? "" : ": \(message)"))" + (explanation.map { ": \($0)" } ?? "")
    }

    /// The refusals an operator meets most often, in words they can act on.
    var explanation: String? {
        switch errcode {
        case "M_UNKNOWN_TOKEN", "M_MISSING_TOKEN": "the access token is wrong or was revoked (MATRIX_ACCESS_TOKEN)"
        case "M_FORBIDDEN": "the bot may not do this here (not in the room, or without the power level)"
        case "M_TOO_LARGE": "the message is larger than the homeserver accepts"
        default: nil
        }
    }

    /// The only 4xx the spec says to try again: a request the server timed out on.
    public var isTransient: Bool { status == 408 }

    /// The longest message kept from the homeserver's answer (it goes into logs and the outbox).
    static let maxMessageLength = 200

    /// The homeserver's `error` as one printable line of at most `maxMessageLength` characters.
    static func bounded(_ text: String) -> String {
        let line = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
        return line.count > maxMessageLength ? String(line.prefix(maxMessageLength)) + "…" : line
    }
}
