/// A registration that could not reach the platform (no connection, TLS, no answer in time, a
/// 5xx): `rhea-relay register` exits 1 with "could not reach …", as distinct from configuration
/// or a refusal the operator must fix (exit 2, `ConfigurationError`).
public struct PlatformUnreachable: Error, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

extension PlatformCallError {
    /// What a failed registration call becomes: `PlatformUnreachable` when the platform could
    /// not be reached or failed on its side, else a `ConfigurationError` saying `refused` and why.
    public func registrationFailure(refused: String) -> any Error {
        switch self {
        case .unreachable, .tls, .timedOut, .server, .cancelled:
            PlatformUnreachable("could not reach \(Refusal.platform): \(reason). Check the network and the API URL, then run it again.")
        default:
            ConfigurationError("\(refused): \(reason)")
        }
    }
}
