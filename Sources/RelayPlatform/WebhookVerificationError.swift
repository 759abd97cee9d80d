public import Hummingbird
import NIOCore
import RelayCore

/// How a platform proves a webhook request is its own: the headers `WebhookVerificationError`
/// names, and what its refusals answer. A platform's verifier conforms, so its error is
/// `WebhookVerificationError<ItsVerifier>`.
public protocol WebhookProof {
    /// The header that carries the proof: a signature (`X-Foo-Signature`), or a shared secret
    /// sent as is (`X-Foo-Secret-Token`).
    static var signatureHeader: HTTPFields.Element.Name { get }
    /// What a well-formed proof looks like, for the log: "v0= and 64 hex digits".
    static var signatureForm: String { get }
    /// The header that carries the signed Unix time, when the platform signs one.
    static var timestampHeader: HTTPFields.Element.Name? { get }
    /// What checks the proof, for the log: "signing secret", "public key".
    static var credential: String { get }
    /// The `error` of every refusal's body: the same whatever went wrong, so a caller probing the
    /// endpoint learns nothing.
    static var answer: String { get }
}

extension WebhookProof {
    public static var signatureForm: String { "well-formed" }
    public static var timestampHeader: HTTPFields.Element.Name? { nil }
}

/// Why a webhook request was not accepted as coming from its platform.
///
/// Every case surfaces the same way, as HTTP 401 with `{"error": answer}`, so a caller probing the
/// endpoint learns nothing; `label` is bounded, for metrics, and `reason` (also `description`)
/// says for the log which header was wrong and how. Neither ever holds a secret, a key or a
/// signature.
public enum WebhookVerificationError<Proof: WebhookProof>: Error, Sendable, Hashable {
    case missingTimestamp
    case malformedTimestamp
    case missingSignature
    case malformedSignature
    /// Older than the replay window: possibly a replay.
    case staleTimestamp(secondsOld: Int)
    /// Ahead of the replay window: a clock far off, or a request made to be replayed later.
    case futureTimestamp(secondsAhead: Int)
    /// Well-formed, but not the platform's proof for this request (the platform's own probes of an
    /// endpoint end here).
    case signatureMismatch
}

extension WebhookVerificationError: CustomStringConvertible, HTTPResponseError {
    /// A bounded label for metrics and logs.
    public var label: String {
        switch self {
        case .missingTimestamp: "missing_timestamp"
        case .malformedTimestamp: "malformed_timestamp"
        case .missingSignature: "missing_signature"
        case .malformedSignature: "malformed_signature"
        case .staleTimestamp: "stale_timestamp"
        case .futureTimestamp: "future_timestamp"
        case .signatureMismatch: "signature_mismatch"
        }
    }

    /// One line for the log: "X-Foo-Signature is missing".
    public var reason: String {
        let signature = "\(Proof.signatureHeader)"
        let timestamp = Proof.timestampHeader.map { "\($0)" } ?? "the timestamp"
        return switch self {
        case .missingTimestamp: "\(timestamp) is missing"
        case .malformedTimestamp: "\(timestamp) is not a Unix time in seconds"
        case .missingSignature: "\(signature) is missing"
        case .malformedSignature: "\(signature) is not \(Proof.signatureForm)"
        case .staleTimestamp(let seconds): "\(timestamp) is \(seconds) s old, beyond the replay window (stale or replayed)"
        case .futureTimestamp(let seconds): "\(timestamp) is \(seconds) s in the future, beyond the replay window"
        case .signatureMismatch: "\(signature) does not match (a forged or altered request, or the wrong \(Proof.credential))"
        }
    }

    public var description: String { reason }

    public var status: HTTPResponse.Status { .unauthorized }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body: JSONValue = ["error": .string(Proof.answer)]
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.encoded())))
    }
}
