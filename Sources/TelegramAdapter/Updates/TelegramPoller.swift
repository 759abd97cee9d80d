import Logging
import RelayCore
import RelayPlatform
import ServiceLifecycle

/// Long polling: `getUpdates` in a loop, as a service the server runs and stops.
///
/// It first removes any webhook (`deleteWebhook`, keeping pending updates), since Telegram holds
/// updates for one or the other. Each batch is handled in order, every command committed to the
/// inbox, and the offset moves past an update only once it is stored: the next `getUpdates`
/// confirms exactly the stored ones, so a crash or a failed store leaves the rest with Telegram,
/// and what comes again is recognised by its id. Errors back off (jittered, up to 30 s) and
/// reset after a good answer; a graceful shutdown cancels the waiting request at once.
struct TelegramPoller: Service {
    let api: any TelegramBotAPI
    let inbound: TelegramInbound
    let timeout: Duration
    let clock: any RelayClock
    let logger: Logger

    /// At most this many updates per request (Telegram's own maximum).
    static let batch = 100

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await self.poll()
        }
    }

    private func poll() async {
        var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(30))
        var webhookRemoved = false
        var offset: Int64?
        while !Task.isCancelled {
            do throws(TelegramAPIError) {
                if !webhookRemoved {
                    try await api.deleteWebhook(dropPendingUpdates: false)
                    webhookRemoved = true
                    logger.info("telegram: polling for updates")
                }
                let updates = try await api.getUpdates(
                    offset: offset, limit: Self.batch, timeout: Int(timeout.components.seconds), allowedUpdates: TelegramConfiguration.allowedUpdates)
                backoff.reset()
                if await handle(updates, offset: &offset) == false { try? await clock.sleep(for: backoff.next()) }
            } catch {
                if Task.isCancelled { return }
                var wait = backoff.next()
                if case .rateLimited(_, let retryAfter) = error { wait = max(wait, retryAfter) }
                logger.warning("telegram: polling failed; trying again", metadata: ["reason": "\(error.reason)", "telegram.retry_in": "\(wait)"])
                try? await clock.sleep(for: wait)
            }
        }
    }

    /// Handles a batch in order, moving `offset` past each update stored; false when one could
    /// not be (it and those after it are asked for again).
    private func handle(_ updates: [JSONValue], offset: inout Int64?) async -> Bool {
        for raw in updates {
            guard let update = TelegramUpdate(json: raw) else {
                // Not an update the relay can read: nothing to store, so confirm it.
                if let id = raw["update_id"]?.int64 { offset = id + 1 }
                continue
            }
            do {
                try await inbound.handle(update)
            } catch {
                logger.error("telegram: could not store an update; it will be asked for again", metadata: ["error": "\(error)"])
                return false
            }
            offset = update.id + 1
        }
        return true
    }
}
