import Logging
public import RelayHTTP

/// What a platform said of the relay's credentials (`ChatPlatform.checkCredentials`).
public enum CredentialCheck: Sendable, Hashable {
    /// Taken: whose they are ("TELEGRAM_BOT_TOKEN is @rhea_bot's").
    case accepted(String)
    /// Refused: what the platform said and the fix, and which credential (its variable).
    case refused(String, credential: String)
    /// The platform could not be asked (no connection, no answer, a failure on its side): what
    /// happened. Says nothing of the credentials, so `serve` does not report them refused.
    case unanswered(String)

    /// Runs `ask` on a transport of its own, shut down after.
    public static func asking(_ ask: (HTTPTransport) async -> CredentialCheck) async -> CredentialCheck {
        do {
            return try await HTTPTransport.withOwnClient(maxConnectionsPerHost: 1) { transport in await ask(transport) }
        } catch {
            return .unanswered("could not be asked: \(error)")
        }
    }
}

extension PlatformCallError {
    /// What a failed check of `credential` says: the platform refused it (and `fix`), or it
    /// could not be asked (no connection, no answer, a failure on its side).
    public func credentialCheck(_ credential: String, fix: String) -> CredentialCheck {
        switch self {
        case .refused:
            .refused("\(Refusal.platform) refused \(credential): \(reason). \(fix)", credential: credential)
        case .rateLimited:
            .unanswered("could not ask \(Refusal.platform) about \(credential) now: \(reason).")
        case .malformed, .invalidRequest:
            .unanswered("could not ask \(Refusal.platform) about \(credential): \(reason). Check the API URL.")
        case .unreachable, .tls, .timedOut, .server, .cancelled:
            .unanswered("could not ask \(Refusal.platform) about \(credential): \(reason). Check the network and the API URL.")
        }
    }
}
