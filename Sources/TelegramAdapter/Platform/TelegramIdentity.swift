import Logging
import RelayPlatform
import Synchronization

/// Who the bot is (`getMe`), asked once and kept: groups address it as `/cmd@Name` and `@Name`,
/// and the relay must tell its own messages from others'. Until Telegram has answered (it may be
/// unreachable at start), the next update asks again.
public final class TelegramIdentity: Sendable {
    let api: any TelegramBotAPI
    let logger: Logger
    private let known = Mutex<TelegramBotIdentity?>(nil)

    init(api: any TelegramBotAPI, logger: Logger) {
        self.api = api
        self.logger = logger
    }

    public func current() async -> TelegramBotIdentity? {
        if let identity = known.withLock({ $0 }) { return identity }
        do throws(TelegramAPIError) {
            let identity = try await api.getMe()
            known.withLock { $0 = identity }
            return identity
        } catch {
            logger.warning("telegram: could not ask who the bot is (getMe)", metadata: ["reason": "\(error.reason)"])
            return nil
        }
    }
}
