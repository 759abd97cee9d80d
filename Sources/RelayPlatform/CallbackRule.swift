import Foundation

/// Where a platform may have the relay answer at a URL the platform hands over in a payload —
/// Slack's and Mattermost's `response_url` — said per platform (`ChatPlatform.callbackRule`).
///
/// A callback URL arrives in a request's body, so whoever can send a command (a Mattermost
/// command's token is known to whoever set the command up) can name any address; without a rule
/// the relay would POST its answer to `http://127.0.0.1:…/internal/…` for them (issue 47,
/// point 2). A URL passes only when it parses strictly (`URLComponents`) and:
/// - its scheme is `http` or `https`, and it has no user info, query or fragment;
/// - its scheme, host (without case; no percent escapes) and port (the scheme's default when none
///   is written) are one place's, as written: `http://2130706433/` and `http://0x7f000001/`
///   are no configured host, so they match none, whatever a resolver would make of them;
/// - its path is that place's prefix followed by one or more segments of unreserved characters
///   (`A–Z a–z 0–9 - . _ ~`), none of them `.` or `..`.
///
/// What is called is then rebuilt from the checked parts (`check` returns it), so no other
/// parser's reading of the original string decides where the request goes. No redirect is
/// followed (`HTTPTransport.makeClient`), so an allowed place cannot send the relay on elsewhere.
public struct CallbackRule: Sendable, Hashable, CustomStringConvertible {
    /// An origin, and the path under it, where callbacks may be.
    public struct Place: Sendable, Hashable, CustomStringConvertible {
        /// `http` or `https`.
        public let scheme: String
        /// Lower-case.
        public let host: String
        /// Always set: the scheme's default when the configured URL names none.
        public let port: Int
        /// Starts and ends with `/`.
        public let pathPrefix: String

        /// `pathPrefix` (which starts and ends with `/`) on the origin of `base`, a configured
        /// URL (`https://chat.example.com`, `http://127.0.0.1:8065/chat`): under `base`'s own path
        /// when `underBasePath` (a server served under a sub-path writes its URLs there), else
        /// under the origin's root. Nil when `base` is not a plain http(s) URL with a host.
        public init?(_ base: String, pathPrefix: String, underBasePath: Bool = true) {
            guard pathPrefix.hasPrefix("/"), pathPrefix.hasSuffix("/"), case .success(let parts) = CallbackURLParts.parse(base) else { return nil }
            var basePath = underBasePath ? parts.path : ""
            while basePath.hasSuffix("/") { basePath.removeLast() }
            self.scheme = parts.scheme
            self.host = parts.host
            self.port = parts.port
            self.pathPrefix = basePath + pathPrefix
        }

        /// `https://hooks.slack.com/commands/…`: no secret in it, so it may be logged.
        public var description: String { CallbackURLParts.origin(scheme: scheme, host: host, port: port) + pathPrefix + "…" }

        func sameOrigin(_ parts: CallbackURLParts) -> Bool { parts.scheme == scheme && parts.host == host && parts.port == port }

        /// Whether `path` is the prefix and plain segments after it.
        func holds(_ path: String) -> Bool {
            guard path.hasPrefix(pathPrefix) else { return false }
            return path.dropFirst(pathPrefix.count).split(separator: "/", omittingEmptySubsequences: false).allSatisfy { segment in
                !segment.isEmpty && segment != "." && segment != ".." && segment.unicodeScalars.allSatisfy(Self.isUnreserved)
            }
        }

        /// RFC 3986's unreserved characters: no escape (`%2e%2e` is `..` to some servers), no
        /// delimiter.
        static func isUnreserved(_ scalar: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || "-._~".unicodeScalars.contains(scalar)
        }
    }

    /// Where callbacks may be; empty: nowhere.
    public let places: [Place]

    public init(_ places: [Place]) {
        self.places = places
    }

    /// For a platform that hands over no URL to answer at: answers go only to the API it is
    /// configured with.
    public static let nothing = CallbackRule([])

    /// `url` as it may be called, rebuilt from its checked parts (scheme, host, port, path).
    /// - Throws: `CallbackRefusal` saying why not; it never holds the path (a callback URL's
    ///   path is its credential), only the host.
    public func check(_ url: String) throws(CallbackRefusal) -> String {
        let parts: CallbackURLParts
        switch CallbackURLParts.parse(url) {
        case .success(let parsed): parts = parsed
        case .failure(let refusal): throw refusal
        }
        let origin = places.filter { $0.sameOrigin(parts) }
        guard !origin.isEmpty else {
            throw CallbackRefusal("its origin, \(parts.shownOrigin), is not allowed (allowed: \(self))")
        }
        guard origin.contains(where: { $0.holds(parts.path) }) else {
            throw CallbackRefusal("its path is not under an allowed one (allowed: \(self))")
        }
        return CallbackURLParts.origin(scheme: parts.scheme, host: parts.host, port: parts.port) + parts.path
    }

    public var description: String { places.isEmpty ? "nowhere" : places.map(\.description).joined(separator: ", ") }
}

/// Why a callback URL is not used: one line for the log, with the host but never the path.
public struct CallbackRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}

/// A URL's parts as `CallbackRule` compares them.
struct CallbackURLParts {
    var scheme: String
    var host: String
    var port: Int
    /// Percent-encoded, as written.
    var path: String

    static func parse(_ url: String) -> Result<CallbackURLParts, CallbackRefusal> {
        guard let components = URLComponents(string: url) else { return .failure(CallbackRefusal("it is not a URL")) }
        guard let scheme = components.scheme?.lowercased(), let defaultPort = ["http": 80, "https": 443][scheme] else {
            return .failure(CallbackRefusal("it is not an http(s) URL"))
        }
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil else {
            return .failure(CallbackRefusal("it has user info (`…@` before the host)"))
        }
        guard components.percentEncodedQuery == nil, components.percentEncodedFragment == nil else {
            return .failure(CallbackRefusal("it has a query or a fragment"))
        }
        guard let host = components.percentEncodedHost?.lowercased(), !host.isEmpty, !host.contains("%") else {
            return .failure(CallbackRefusal("it has no plain host"))
        }
        return .success(CallbackURLParts(scheme: scheme, host: host, port: components.port ?? defaultPort, path: components.percentEncodedPath))
    }

    /// `scheme://host[:port]`, the port left out when it is the scheme's default.
    static func origin(scheme: String, host: String, port: Int) -> String {
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let isDefault = (scheme == "http" && port == 80) || (scheme == "https" && port == 443)
        return "\(scheme)://\(shownHost)" + (isDefault ? "" : ":\(port)")
    }

    /// The origin for a log line, its host cut to plain characters and 64 of them: it came
    /// from whoever sent the payload.
    var shownOrigin: String {
        let kept = host.unicodeScalars.filter { CallbackRule.Place.isUnreserved($0) || $0 == ":" || $0 == "[" || $0 == "]" }
        return Self.origin(scheme: scheme, host: String(String.UnicodeScalarView(kept.prefix(64))), port: port)
    }
}
