import Logging
public import RelayHTTP

/// What a platform said of the relay's credentials (`ChatPlatform.checkCredentials`).
public enum CredentialCheck: Sendable, Hashable {
    /// Taken: whose they are ("TELEGRAM_BOT_TOKEN is @rhea_bot's").
    case accepted(String)
    /// Refused, or the platform could not be asked: what happened and the fix.
    case refused(String)

    /// Runs `ask` on a transport of its own, shut down after.
    public static func asking(_ ask: (HTTPTransport) async -> CredentialCheck) async -> CredentialCheck {
        do {
            return try await HTTPTransport.withOwnClient(maxConnectionsPerHost: 1) { transport in await ask(transport) }
        } catch {
            return .refused("could not be asked: \(error)")
        }
    }
}

extension PlatformCallError {
    /// What a failed check of `credential` says: the platform refused it (and `fix`), or it
    /// could not be asked (no connection, no answer, a failure on its side).
    public func credentialCheck(_ credential: String, fix: String) -> CredentialCheck {
        switch self {
        case .unreachable, .tls, .timedOut, .server, .cancelled:
            .refused("could not ask \(Refusal.platform) about \(credential): \(reason). Check the network and the API URL.")
        default:
            .refused("\(Refusal.platform) refused \(credential): \(reason). \(fix)")
        }
    }
}
