import Foundation

/// Where the shared store lives: a `postgres://user:password@host:port/database?sslmode=…` URL
/// (`postgresql://` too), parsed once at start so a mistake is reported before anything runs.
///
/// Its `description` masks the password: the URL is safe to log, show in `/readyz` or put in an
/// error; the password itself is only handed to the connection.
public struct PostgresURL: Sendable, Hashable, CustomStringConvertible {
    /// How the connection uses TLS, as libpq's `sslmode` names it (the modes this relay offers).
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        case disable, prefer, require
    }

    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String
    public var tls: TLSMode

    /// Parses `text`; throws ``PostgresURLError`` saying what is wrong (never quoting the password).
    public init(_ text: String) throws(PostgresURLError) {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let scheme = text.range(of: "://").map({ String(text[..<$0.lowerBound]) }) else {
            throw .malformed("it does not start with postgres:// (for example postgres://relay:secret@db:5432/relay)")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            // What precedes :// is quoted only when it can be a scheme: text such as
            // `relay:secret@db://…` would otherwise put a password in the error.
            guard Self.isScheme(scheme) else { throw .malformed("it does not start with postgres:// or postgresql://") }
            throw .malformed("its scheme is \"\(scheme)\"; use postgres:// or postgresql://")
        }
        // URLComponents reads user, password, host, port and query, and refuses what no URL is.
        guard let parts = URLComponents(string: text) else {
            if Self.hasNonNumericPort(text) {
                throw .malformed("its port is not a number between 1 and 65535 (postgres://USER:PASSWORD@HOST:PORT/DATABASE)")
            }
            throw .malformed("it is not a valid URL (characters such as @ : / ? # in the password must be percent-encoded)")
        }
        guard let user = parts.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw .malformed("it names no user (postgres://USER:PASSWORD@HOST:PORT/DATABASE)")
        }
        // An IPv6 literal comes back in its brackets; the connection wants the address alone.
        guard let host = parts.host.map(Self.withoutBrackets), !host.isEmpty else {
            throw .malformed("it names no host (postgres://USER:PASSWORD@HOST:PORT/DATABASE)")
        }
        if let port = parts.port, !(1...65_535).contains(port) {
            throw .malformed("its port \(port) is not between 1 and 65535")
        }
        let path = parts.percentEncodedPath.removingPercentEncoding ?? parts.percentEncodedPath
        let database = path.hasPrefix("/") ? String(path.dropFirst()) : path
        guard !database.isEmpty, !database.contains("/") else {
            throw .malformed("it names no database after the host (postgres://USER:PASSWORD@HOST:PORT/DATABASE)")
        }
        var tls = TLSMode.prefer
        for item in parts.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                    throw .malformed("sslmode=\(item.value ?? "") is not one of disable, prefer, require")
                }
                tls = mode
            default:
                throw .malformed("the option \"\(item.name)\" is not supported (only sslmode=disable|prefer|require)")
            }
        }
        self.user = user
        self.password = parts.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        self.host = host
        self.port = parts.port ?? 5432
        self.database = database
        self.tls = tls
    }

    /// Whether `text` is made of the characters a URL scheme may hold (RFC 3986, section 3.1).
    private static func isScheme(_ text: String) -> Bool {
        let letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
        guard let first = text.first, letters.contains(first) else { return false }
        return text.allSatisfy { letters.contains($0) || "0123456789+-.".contains($0) }
    }

    /// Whether the host part (after the authority's last `@`, which no password follows) ends in
    /// a port that is not digits: `URLComponents` refuses such a URL without saying why.
    private static func hasNonNumericPort(_ text: String) -> Bool {
        guard let start = text.range(of: "://")?.upperBound else { return false }
        let authority = text[start...].prefix { !"/?#".contains($0) }
        guard let at = authority.lastIndex(of: "@") else { return false }
        let hostAndPort = authority[authority.index(after: at)...]
        // After an IPv6 literal's closing bracket, or else after the host's only colon.
        let afterHost = hostAndPort.lastIndex(of: "]").map { hostAndPort[hostAndPort.index(after: $0)...] } ?? hostAndPort
        guard let colon = afterHost.firstIndex(of: ":") else { return false }
        let port = afterHost[afterHost.index(after: colon)...]
        return !port.allSatisfy(\.isASCII) || !port.allSatisfy(\.isNumber)
    }

    private static func withoutBrackets(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// The URL with the password masked: what logs, errors and `/readyz` show.
    public var description: String {
        let secret = password == nil ? "" : ":•••"
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return "postgres://\(user)\(secret)@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)"
    }
}

/// A `STORE_URL` that cannot be used, and why.
public enum PostgresURLError: Error, Sendable, Hashable, CustomStringConvertible {
    case malformed(String)

    public var description: String {
        switch self {
        case .malformed(let reason): "The store URL cannot be used: \(reason)."
        }
    }
}
