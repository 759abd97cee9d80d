import Crypto
public import Hummingbird
public import NIOCore
import RelayCore
public import RelayPlatform

public import struct Foundation.Date

/// Names of the headers Discord signs interaction requests with.
public enum DiscordHeaders {
    // Hummingbird re-exports `HTTPFields` but not `HTTPField`; its element type names the same
    // `HTTPField.Name` without an import of HTTPTypes.
    public typealias Name = HTTPFields.Element.Name

    /// The Ed25519 signature of timestamp + raw body, as 128 hex digits.
    public static let signature = Name("X-Signature-Ed25519")!
    /// The string Discord prepended to the body before signing (Unix seconds).
    public static let timestamp = Name("X-Signature-Timestamp")!
}

/// Checks that an interaction request really comes from Discord: `X-Signature-Ed25519` is an
/// Ed25519 signature of `X-Signature-Timestamp` followed by the raw body, under the
/// application's public key, and the timestamp is within five minutes of now (either way).
///
/// Discord sends deliberately forged requests to the endpoint and removes the URL if one is
/// accepted, so every failure is a 401. Discord documents no replay window; five minutes is
/// this relay's choice, the same as Slack's: wide enough for clock skew and Discord's own
/// delays, narrow enough that a captured request cannot be replayed later (the interaction
/// token dies after 15 minutes anyway, and interaction ids are deduplicated).
///
/// Verify the raw body bytes before decoding them: re-encoding a parsed body would not match.
public struct DiscordRequestVerifier: Sendable {
    /// The replay window, in seconds, either way.
    public static let defaultTolerance = 300

    private let key: Curve25519.Signing.PublicKey
    /// The largest accepted |now − timestamp|, in seconds.
    public let tolerance: Int
    private let now: @Sendable () -> Date

    /// - Parameters:
    ///   - publicKeyHex: the application's public key (Developer Portal › General Information),
    ///     64 hex digits.
    ///   - tolerance: the largest accepted clock difference, in seconds.
    ///   - now: the clock; tests pass a fixed one.
    public init(
        publicKeyHex: String, tolerance: Int = defaultTolerance, now: @escaping @Sendable () -> Date = { Date() }
    ) throws(DiscordPublicKeyError) {
        // Surrounding whitespace (a trailing newline from a secrets file) is forgiven.
        let words = publicKeyHex.split(whereSeparator: \.isWhitespace)
        guard words.count == 1, let bytes = Hex.decode(words[0], count: 32) else { throw .notHex }
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes) else { throw .notAKey }
        self.key = key
        self.tolerance = max(0, tolerance)
        self.now = now
    }

    /// Verifies a request from its headers and its whole, unparsed body.
    public func verify(headers: HTTPFields, body: ByteBuffer) throws(DiscordVerificationError) {
        try verify(timestamp: headers[DiscordHeaders.timestamp], signature: headers[DiscordHeaders.signature], body: Array(body.readableBytesView))
    }

    /// Verifies the two header values (nil when the header is absent) against the raw body.
    public func verify(timestamp: String?, signature: String?, body: [UInt8]) throws(DiscordVerificationError) {
        guard let timestamp else { throw .missingTimestamp }
        guard let seconds = Self.parseTimestamp(timestamp) else { throw .malformedTimestamp }
        guard let signature else { throw .missingSignature }

        let skew = Int(now().timeIntervalSince1970.rounded(.down)) - seconds
        if skew > tolerance { throw .staleTimestamp(secondsOld: skew) }
        if -skew > tolerance { throw .futureTimestamp(secondsAhead: -skew) }
        try verifySignature(signature, over: Array(timestamp.utf8) + body)
    }

    /// Checks a hex signature over any message: the Ed25519 step alone, which RFC 8032's test
    /// vectors exercise (their messages are not timestamp + body).
    func verifySignature(_ signatureHex: String, over message: [UInt8]) throws(DiscordVerificationError) {
        guard let signature = Hex.decode(signatureHex, count: 64) else { throw .malformedSignature }
        // BoringSSL's verify rejects non-canonical signatures (S ≥ L), so a signature cannot be
        // altered into a second valid one.
        guard key.isValidSignature(signature, for: message) else { throw .signatureMismatch }
    }

    /// Digits only (no sign, no spaces), and short enough not to overflow.
    private static func parseTimestamp(_ value: String) -> Int? {
        guard (1...12).contains(value.utf8.count), value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int(value)
    }
}

extension DiscordRequestVerifier: CustomStringConvertible {
    /// Says nothing of the key, so a verifier can be logged or interpolated safely.
    public var description: String { "DiscordRequestVerifier(tolerance: \(tolerance) s)" }
}

/// Why the configured public key cannot be used; says nothing of the key itself.
public enum DiscordPublicKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not 64 hex digits.
    case notHex
    /// 32 bytes that are not an Ed25519 public key.
    case notAKey

    public var description: String {
        switch self {
        case .notHex: "the Discord public key must be 64 hex digits (Developer Portal › General Information › Public Key)"
        case .notAKey: "the Discord public key is not a valid Ed25519 public key"
        }
    }
}

/// Why a request was not accepted as coming from Discord: 401 with
/// `{"error":"invalid request signature"}`, whatever the reason.
public typealias DiscordVerificationError = WebhookVerificationError<DiscordRequestVerifier>

extension DiscordRequestVerifier: WebhookProof {
    public static let signatureHeader = DiscordHeaders.signature
    public static let signatureForm = "128 hex digits"
    public static let timestampHeader: HTTPFields.Element.Name? = DiscordHeaders.timestamp
    public static let credential = "public key"
    public static let answer = "invalid request signature"
}
