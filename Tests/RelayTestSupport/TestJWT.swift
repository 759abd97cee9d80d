public import Crypto
public import Foundation
public import RelayCore

/// HS256 JSON Web Tokens as a Rhea deployment signs them (`header.claims.MAC`, base64url), made
/// by hand so a test can put anything in the header or the claims: the served API's tests sign
/// tokens with it, at every layer.
public enum TestJWT {
    /// A token over `claims` (any JSON, even not an object) with `header`, signed with `secret`.
    public static func hs256(_ claims: JSONValue, secret: String, header: JSONValue = ["alg": "HS256", "typ": "JWT"]) -> String {
        let signed = base64URL(header.serialized() ?? []) + "." + base64URL(claims.serialized() ?? [])
        let mac = HMAC<SHA256>.authenticationCode(for: Array(signed.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return signed + "." + base64URL(Array(mac))
    }

    /// Whether `token`'s MAC is `secret`'s over its first two parts.
    public static func verifies(_ token: String, secret: String) -> Bool {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return false }
        let signed = parts[0] + "." + parts[1]
        let mac = HMAC<SHA256>.authenticationCode(for: Array(signed.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return base64URL(Array(mac)) == parts[2]
    }

    /// Base64url without padding (RFC 7515 §2).
    public static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
