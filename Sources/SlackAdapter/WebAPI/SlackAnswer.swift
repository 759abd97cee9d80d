public import RelayCore
public import RelayPlatform

/// One answer Slack sent for a call that worked (`"ok": true`, or a `response_url`'s plain `ok`):
/// its body, which the call that made it decodes into the model of what that method returns.
///
/// The envelope (`ok`, `error`, warnings) is read once in `SlackWebClient.interpret`; the rest
/// of the body is read only by the method that knows its shape.
public struct SlackAnswer: Sendable, Hashable {
    /// The answer's JSON body (`{}` for a `response_url` that answered plain text).
    public var body: [UInt8]
    /// Slack's warnings on it (`message_truncated`…), sanitised.
    public var warnings: [String]

    public init(body: [UInt8], warnings: [String] = []) {
        self.body = body
        self.warnings = warnings
    }

    /// An answer with these members: what a test double returns.
    public init(_ members: JSONValue) {
        self.init(body: members.encoded())
    }

    /// The body read as `T`; a body without what `T` requires is `.malformed`, naming the field.
    public func decode<T: Decodable>(_ type: T.Type, method: String) throws(SlackAPIError) -> T {
        do {
            return try PayloadDecoding.json(type, from: body, as: method)
        } catch {
            throw .malformed(endpoint: method, reason: error.problem)
        }
    }
}

/// The members every Web API answer has. Read leniently: a proxy's JSON may hold anything, and a
/// member of the wrong type is read as absent (the answer is then "not ok", never a crash).
struct SlackAnswerEnvelope: Decodable {
    var isObject = false
    var ok: Bool?
    var error: String?
    var warning: String?
    var metadataWarnings: [String] = []

    private enum CodingKeys: String, CodingKey {
        case ok, error, warning
        case responseMetadata = "response_metadata"
    }

    private enum MetadataKeys: String, CodingKey {
        case warnings
    }

    init(from decoder: any Decoder) throws {
        guard let container = try? decoder.container(keyedBy: CodingKeys.self) else { return }
        isObject = true
        ok = container.lenient(Bool.self, .ok)
        error = container.lenient(String.self, .error)
        warning = container.lenient(String.self, .warning)
        if let metadata = try? container.nestedContainer(keyedBy: MetadataKeys.self, forKey: .responseMetadata) {
            // One odd warning does not hide the others.
            metadataWarnings = (metadata.lenient([Lenient<String>].self, .warnings) ?? []).compactMap(\.value)
        }
    }
}

/// `{"ts": …}` (`chat.postMessage`, `chat.update`).
struct SlackTSAnswer: Decodable {
    var ts: String
}

/// `{"message_ts": …}` (`chat.postEphemeral`).
struct SlackEphemeralAnswer: Decodable {
    var messageTS: String

    enum CodingKeys: String, CodingKey {
        case messageTS = "message_ts"
    }
}

/// `{"url": …}` (`apps.connections.open`).
struct SlackConnectionAnswer: Decodable {
    var url: String
}
