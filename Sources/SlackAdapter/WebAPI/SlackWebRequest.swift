public import RelayCore

/// One POST to Slack: a Web API method, or a `response_url`.
///
/// Tokens and `response_url`s are credentials, so this type's descriptions (and those of its
/// destination) never show them: printing or dumping a request is safe.
public struct SlackWebRequest: Sendable, Hashable {
    /// Where the request goes and with which credential.
    public enum Destination: Sendable, Hashable {
        /// A Web API method such as `chat.postMessage`, POSTed to `{apiURL}/{method}` with
        /// `Authorization: Bearer <token>`; a nil `token` means the client's bot token.
        case method(String, token: String? = nil)
        /// A `response_url` from a slash command or an interaction: the URL is the credential,
        /// so no `Authorization` header is sent.
        case responseURL(String)
    }

    /// How the body goes on the wire: JSON for write methods; a form for read methods such as
    /// `conversations.replies`, which do not read JSON bodies.
    public enum Encoding: Sendable, Hashable {
        case json
        case form
    }

    public var destination: Destination
    /// The body, an object (a form takes its top-level strings, numbers and Booleans).
    public var body: JSONValue
    public var encoding: Encoding
    /// The whole exchange's time limit; nil uses the client's default.
    public var timeout: Duration?

    /// Creates a request; see `SlackWebAPI`'s helpers for the common ones.
    public init(_ destination: Destination, body: JSONValue, encoding: Encoding = .json, timeout: Duration? = nil) {
        self.destination = destination
        self.body = body
        self.encoding = encoding
        self.timeout = timeout
    }

    /// A request for the Web API method `method` with the client's bot token.
    public static func method(_ method: String, body: JSONValue, timeout: Duration? = nil) -> SlackWebRequest {
        SlackWebRequest(.method(method), body: body, timeout: timeout)
    }

    /// What the request calls, safe to log: the method name, or `response_url`.
    public var label: String { destination.label }
}

extension SlackWebRequest.Destination: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The method name, or `response_url`; never the token nor the URL.
    public var label: String {
        switch self {
        case .method(let name, _): name
        case .responseURL: "response_url"
        }
    }

    public var description: String {
        switch self {
        case .method(let name, let token): token == nil ? name : "\(name) (own token)"
        case .responseURL: "response_url"
        }
    }

    public var debugDescription: String { description }

    // `dump` and the debugger read mirrors, not descriptions.
    public var customMirror: Mirror { Mirror(self, children: ["label": label]) }
}

extension SlackWebRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SlackWebRequest(\(destination))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["destination": destination.description, "timeout": timeout as Any])
    }
}
