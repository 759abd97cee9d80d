public import Foundation

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
            throw .malformed("its scheme is \"\(scheme)\"; use postgres:// or postgresql://")
        }
        // URLComponents reads user, password, host, port and query, and refuses what no URL is.
        guard let parts = URLComponents(string: text) else {
            throw .malformed("it is not a valid URL (characters such as @ : / ? # in the password must be percent-encoded)")
        }
        guard let user = parts.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw .malformed("it names no user (postgres://USER:PASSWORD@HOST:PORT/DATABASE)")
        }
        guard let host = parts.host, !host.isEmpty else {
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
