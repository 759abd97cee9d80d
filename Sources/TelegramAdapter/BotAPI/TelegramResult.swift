import Foundation
public import RelayCore
public import RelayPlatform

/// The answer to a Bot API call that worked (`{"ok":true,"result":…}`): its body, whose `result`
/// the method that made the call decodes into the model of what that method returns.
///
/// The envelope (`ok`, `error_code`, `description`, `parameters`) is read once, in
/// `TelegramBotClient.interpret`.
public struct TelegramResult: Sendable, Hashable {
    /// The whole answer, `{"ok":true,"result":…}`.
    public var body: [UInt8]

    public init(body: [UInt8]) {
        self.body = body
    }

    /// An answer whose `result` is `result`: what a test double returns.
    public init(_ result: JSONValue) {
        self.init(body: JSONValue.object(["ok": true, "result": result]).encoded())
    }

    /// The `result` read as `T`; one without what `T` requires is `.malformed`, naming the field
    /// ("missing field `result.message_id`").
    public func decode<T: Decodable>(_ type: T.Type, method: String) throws(TelegramAPIError) -> T {
        do {
            return try PayloadDecoding.json(Envelope<T>.self, from: body, as: method).result
        } catch {
            throw .malformed(endpoint: method, reason: error.problem)
        }
    }

    private struct Envelope<T: Decodable>: Decodable {
        var result: T
    }
}

/// The members every Bot API answer may have, read leniently: a proxy's JSON may hold anything,
/// and a member of the wrong type is read as absent.
struct TelegramAnswerEnvelope: Decodable {
    var isObject = false
    var ok: Bool?
    var hasResult = false
    var errorCode: Int?
    var description: String?
    var retryAfter: Double?
    var migrateToChatID: Int64?

    private enum CodingKeys: String, CodingKey {
        case ok, result, description, parameters
        case errorCode = "error_code"
    }

    private enum ParameterKeys: String, CodingKey {
        case retryAfter = "retry_after"
        case migrateToChatID = "migrate_to_chat_id"
    }

    init(from decoder: any Decoder) throws {
        guard let container = try? decoder.container(keyedBy: CodingKeys.self) else { return }
        isObject = true
        ok = container.lenient(Bool.self, .ok)
        hasResult = container.contains(.result)
        errorCode = container.lenient(Int.self, .errorCode)
        description = container.lenient(String.self, .description)
        if let parameters = try? container.nestedContainer(keyedBy: ParameterKeys.self, forKey: .parameters) {
            retryAfter = parameters.lenient(Double.self, .retryAfter)
            migrateToChatID = parameters.lenient(Int64.self, .migrateToChatID)
        }
    }

    /// The envelope of `body`; nil when it is not JSON at all.
    static func read(_ body: [UInt8]) -> TelegramAnswerEnvelope? {
        try? JSONDecoder().decode(TelegramAnswerEnvelope.self, from: Data(body))
    }
}

/// `getMe`'s result.
struct TelegramMe: Decodable {
    var id: Int64
    var username: String
    var supportsInlineQueries: Bool?

    enum CodingKeys: String, CodingKey {
        case id, username
        case supportsInlineQueries = "supports_inline_queries"
    }
}

/// `sendMessage`'s result: the message sent, of which only its id is read.
struct TelegramSentMessage: Decodable {
    var messageID: Int64

    enum CodingKeys: String, CodingKey {
        case messageID = "message_id"
    }
}

/// `getChatMember`'s result: only the member's `status` is read.
struct TelegramChatMember: Decodable {
    var status: String?
}

/// `getFile`'s result: where the file is and its declared size.
struct TelegramFile: Decodable {
    var fileSize: Int?
    var filePath: String?

    enum CodingKeys: String, CodingKey {
        case fileSize = "file_size"
        case filePath = "file_path"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fileSize = container.lenient(Int.self, .fileSize)
        filePath = container.lenient(String.self, .filePath)
    }
}
