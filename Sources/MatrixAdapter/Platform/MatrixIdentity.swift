import Logging
import RelayPlatform
import Synchronization

/// Who the bot is: its user id (`whoami`) and display name, asked once and kept. Mentions name
/// the bot by either, and the relay must tell its own events from others'. Until the homeserver
/// has answered (it may be unreachable at start), the next caller asks again.
final class MatrixIdentity: Sendable {
    struct Known: Sendable, Hashable {
        /// `@relay:example.org`.
        var user: String
        /// What clients show and mention pills write in a body; nil when it has none.
        var displayName: String?
    }

    let api: any MatrixAPI
    let logger: Logger
    private let known = Mutex<Known?>(nil)

    init(api: any MatrixAPI, logger: Logger) {
        self.api = api
        self.logger = logger
    }

    func current() async -> Known? {
        do throws(MatrixAPIError) {
            return try await lookUp()
        } catch {
            logger.warning("matrix: could not ask who the bot is (whoami)", metadata: ["reason": "\(error.reason)"])
            return nil
        }
    }

    /// Who the bot is, asked when not known yet; throws what the homeserver said.
    func lookUp() async throws(MatrixAPIError) -> Known {
        if let known = known.withLock({ $0 }) { return known }
        let user = try await api.whoami()
        // Cosmetic: a bot without a display name is mentioned by its user id.
        let name = try? await api.displayName(of: user)
        let identity = Known(user: user, displayName: name.flatMap { $0 }.flatMap { $0.isEmpty ? nil : $0 })
        known.withLock { $0 = identity }
        return identity
    }
}
