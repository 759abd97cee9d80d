/// A short, user-safe reason for a failed connection, shared by every outbound HTTP client.
///
/// Read from the error's description because the transport's error types (NIO, AsyncHTTPClient)
/// live in modules the callers do not all import, and their texts are stable enough to sort.
public enum ConnectionFailure {
    static let tlsReason = "TLS handshake failed"

    public static func reason(_ error: any Error) -> String {
        let text = String(describing: error).lowercased()
        let reasons: [(needles: [String], reason: String)] = [
            (["refused"], "connection refused"),
            (["reset", "broken pipe", "eof"], "connection reset"),
            (["dns", "getaddrinfo", "name or service", "nodename", "resolve", "no address"], "DNS lookup failed"),
            (["tls", "ssl", "certificate", "handshake"], tlsReason),
            (["unreachable", "no route"], "network unreachable"),
            (["timed out", "timeout"], "connect timed out"),
        ]
        for (needles, reason) in reasons where needles.contains(where: text.contains) {
            return reason
        }
        return "connection failed"
    }
}
