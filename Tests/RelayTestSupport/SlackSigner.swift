import Crypto
import Foundation

/// Signs a request body the way Slack does, for tests of request verification.
///
/// `X-Slack-Signature` is `"v0=" + hex(HMAC-SHA256(key: signingSecret, "v0:{ts}:{body}"))` and
/// `X-Slack-Request-Timestamp` is `ts`, Unix seconds.
public struct SlackSigner: Sendable {
    public static let timestampHeader = "X-Slack-Request-Timestamp"
    public static let signatureHeader = "X-Slack-Signature"

    public let signingSecret: String

    public init(signingSecret: String) {
        self.signingSecret = signingSecret
    }

    /// `v0=…` for `body` sent at `timestamp`.
    public func signature(body: some Collection<UInt8>, timestamp: Int) -> String {
        var message = Array("v0:\(timestamp):".utf8)
        message.append(contentsOf: body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Array(signingSecret.utf8)))
        return "v0="
            + mac.map { byte in
                let hex = String(byte, radix: 16)
                return byte < 16 ? "0" + hex : hex
            }.joined()
    }

    /// `signature(body:timestamp:)` for a text body.
    public func signature(body: String, timestamp: Int) -> String {
        signature(body: Array(body.utf8), timestamp: timestamp)
    }

    /// The two headers, by name; `timestamp` defaults to now.
    public func headers(body: some Collection<UInt8>, timestamp: Int = SlackSigner.now()) -> [String: String] {
        [Self.timestampHeader: String(timestamp), Self.signatureHeader: signature(body: body, timestamp: timestamp)]
    }

    /// The two headers for a text body.
    public func headers(body: String, timestamp: Int = SlackSigner.now()) -> [String: String] {
        headers(body: Array(body.utf8), timestamp: timestamp)
    }

    /// Unix seconds now.
    public static func now() -> Int {
        Int(Date().timeIntervalSince1970)
    }
}
