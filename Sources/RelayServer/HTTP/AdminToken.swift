import Crypto
import Hummingbird
import RelayCore

/// The operator's token for the detailed `/readyz` report and, when set, `/metrics`
/// (`http.adminToken`, env `HTTP_ADMIN_TOKEN`, or `http.adminTokenFile`).
///
/// Only its SHA-256 is kept, and a presented token is compared digest to digest in constant
/// time (swift-crypto's digest equality), so neither its content nor its length leaks through
/// timing.
struct AdminToken: Sendable, CustomStringConvertible {
    private let digest: SHA256.Digest

    init(_ token: String) {
        digest = SHA256.hash(data: Array(token.utf8))
    }

    func matches(_ presented: String) -> Bool {
        SHA256.hash(data: Array(presented.utf8)) == digest
    }

    /// Says nothing of the token, so it can be logged or interpolated safely.
    var description: String { "AdminToken(…)" }

    /// What a request may see.
    enum Access: Sendable, Equatable {
        /// No `Authorization` header: the public answer.
        case anonymous
        /// The right bearer token.
        case admin
        /// A header that is wrong, or a token when none is configured: 401 with why.
        case refused(String)
    }

    static func access(_ headers: HTTPFields, token: AdminToken?) -> Access {
        guard let value = headers[.authorization] else { return .anonymous }
        guard let token else {
            return .refused("This server has no admin token configured (http.adminToken), so it has no detailed report to show.")
        }
        let scheme = "bearer "
        guard value.count > scheme.count, value.prefix(scheme.count).lowercased() == scheme else {
            return .refused("Authorization must be `Bearer <admin token>`.")
        }
        return token.matches(String(value.dropFirst(scheme.count))) ? .admin : .refused("The admin token does not match.")
    }

    /// 401, `{"error": why}`, asking for a bearer token.
    static func refusal(_ why: String) -> Response {
        let body: JSONValue = ["error": .string(why)]
        return Response(
            status: .unauthorized, headers: [.contentType: "application/json; charset=utf-8", .wwwAuthenticate: "Bearer"],
            body: .init(byteBuffer: ByteBuffer(bytes: body.encoded())))
    }
}
