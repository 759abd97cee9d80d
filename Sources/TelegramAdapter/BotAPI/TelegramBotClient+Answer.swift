import NIOHTTP1
public import RelayCore
public import RelayHTTP
public import RelayPlatform

extension TelegramBotClient {
    /// The longest `description` kept from Telegram's answer.
    static let maxDescriptionLength = 200

    /// The `result` of an `ok:true` answer; anything else as the matching error.
    ///
    /// - 429 (status or `error_code`): `.rateLimited`, waiting `parameters.retry_after`, else
    ///   `Retry-After`, else 1 s (each read and clamped by `RetryAfter`).
    /// - 5xx: `.server`.
    /// - `parameters.migrate_to_chat_id`: refused, `.migrated`.
    /// - Other `ok:false` (or a 4xx without JSON): refused, `.error` with `error_code` and `description`.
    /// - A 2xx that is not the Bot API's JSON, or has no `result`: `.malformed`.
    public static func interpret(_ answer: HTTPAnswer, method: String) throws(TelegramAPIError) -> JSONValue {
        try interpret(status: answer.status, retryAfter: answer.headers.first(name: "Retry-After"), body: answer.body, method: method)
    }

    /// `interpret` from the parts of an answer that matter: its status, its `Retry-After` header
    /// and its body.
    static func interpret(status: Int, retryAfter: String?, body: [UInt8], method: String) throws(TelegramAPIError) -> JSONValue {
        let isSuccess = (200..<300).contains(status)
        let json = JSONValue.parse(body)
        let errorCode = UntrustedNumber.checked(json?["error_code"]?.intValue, in: 100...599, source: "telegram", field: "error_code")
        let parameters = json?["parameters"]
        if status == 429 || errorCode == 429 {
            let fromBody = parameters?["retry_after"]?.doubleValue.flatMap { RetryAfter.clamp(seconds: $0, source: "telegram") }
            let fromHeader = RetryAfter.parse(retryAfter, source: "telegram")
            throw .rateLimited(endpoint: method, retryAfter: fromBody ?? fromHeader ?? .seconds(1))
        }
        let ok = json?["ok"]?.boolValue
        if isSuccess, ok == true {
            guard let result = json?["result"] else { throw .malformed(endpoint: method, reason: "no result") }
            return result
        }
        let code = errorCode ?? status
        if status >= 500 || code >= 500 { throw .server(endpoint: method, status: max(status, code)) }
        guard ok != nil else {
            if isSuccess { throw .malformed(endpoint: method, reason: json == nil ? "not JSON" : "no \"ok\"") }
            // A 4xx from a proxy in front of the Bot API: no description to keep.
            throw .refused(endpoint: method, .error(code: status, description: ""))
        }
        if let newChatID = parameters?["migrate_to_chat_id"]?.intValue {
            throw .refused(endpoint: method, .migrated(newChatID: Int64(newChatID)))
        }
        throw .refused(endpoint: method, .error(code: code, description: boundedDescription(json?["description"]?.stringValue ?? "")))
    }

    /// Telegram's description as one printable line of at most `maxDescriptionLength`
    /// characters: it goes into logs and the outbox.
    static func boundedDescription(_ text: String) -> String {
        let line = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
        return line.count > maxDescriptionLength ? String(line.prefix(maxDescriptionLength)) + "…" : line
    }
}
