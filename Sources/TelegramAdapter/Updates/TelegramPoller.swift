import Foundation
import Logging
import RelayCore
import RelayPlatform
import ServiceLifecycle

/// Long polling: `getUpdates` in a loop, while this replica holds the lease on it
/// (`telegram.poll`): Telegram ends the older of two concurrent `getUpdates` with 409, so only
/// one replica of a deployment may poll.
///
/// It first removes any webhook (`deleteWebhook`, keeping pending updates), since Telegram holds
/// updates for one or the other. Each batch is handled in order, every command committed to the
/// inbox, and the offset moves past an update only once it is stored: the next `getUpdates`
/// confirms exactly the stored ones, so a crash or a failed store leaves the rest with Telegram,
/// and what comes again is recognised by its id. Errors back off (jittered, up to 30 s) and
/// reset after a good answer; a graceful shutdown cancels the waiting request at once.
///
/// The offset is also kept in the lease's state after each handled batch, before the next
/// `getUpdates` confirms it: a replica that takes over starts where the last one stopped, and
/// Telegram gives it none of the updates already handled, even those its predecessor died
/// before confirming (`TelegramPollState`).
///
/// At a handover two polls are never open at once, so the new holder polls at once instead of
/// waiting out its predecessor's poll timeout: a replica that loses the lease has its poll
/// cancelled, and its connection closed, `margin` before the lease can pass to another; a
/// graceful stop cancels the poll and closes its connection before the lease is released; a
/// killed replica's connection closes with the process (`TelegramPollingFaultTests`: no 409
/// across a SIGKILL and a SIGTERM). The poll runs on an HTTP client of its own (`Session`),
/// shut down before `run` returns: the client closes a cancelled request's connection later, on
/// its event loop, so without the shutdown nothing orders that close before the release (a
/// 409 at a SIGTERM handover was seen twice in the `.peers` group); the shutdown returns once
/// the connection is closed.
/// Were Telegram still to hold a dead poller's request, the successor's `getUpdates` would end it
/// with a 409 no one reads, and what that request was handed was never confirmed, so it comes
/// again. Only a replica frozen for longer than its lease (a paused VM) meets a 409 itself: it
/// backs off, and its lease's watch stops it.
struct TelegramPoller {
    /// Runs a poll with an API of its own, whose connections are closed when it returns.
    typealias Session = @Sendable (_ poll: @Sendable (any TelegramBotAPI) async -> Void) async -> Void

    let session: Session
    let inbound: TelegramInbound
    let timeout: Duration
    /// The bot's id (the token's first part): an offset is only good for the bot it came from.
    let bot: String
    let clock: any RelayClock
    /// Told when Telegram refuses the token (401) and when it takes it again.
    let credentials: CredentialReporter
    let logger: Logger

    /// At most this many updates per request (Telegram's own maximum).
    static let batch = 100

    /// Polls under `grant` until cancelled or a graceful shutdown.
    func run(_ grant: LeaseGrant) async {
        let saved = grant.state.flatMap(TelegramPollState.init(saved:)).flatMap { $0.offset(for: bot, now: clock.now) }
        if let saved { logger.info("telegram: polling from the offset the last poller saved", metadata: ["telegram.offset": "\(saved)"]) }
        await session { api in
            await cancelWhenGracefulShutdown {
                await self.poll(from: saved, grant: grant, api: api)
            }
        }
    }

    private func poll(from saved: Int64?, grant: LeaseGrant, api: any TelegramBotAPI) async {
        var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(30))
        var webhookRemoved = false
        var offset = saved
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
                credentials.accepted("TELEGRAM_BOT_TOKEN")
                let before = offset
                let stored = await handle(updates, offset: &offset)
                if let offset, offset != before { _ = await grant.saveState(TelegramPollState(bot: bot, offset: offset, savedAt: clock.now).saved) }
                if !stored { try? await clock.sleep(for: backoff.next()) }
            } catch {
                if Task.isCancelled { return }
                var wait = backoff.next()
                if case .rateLimited(_, let retryAfter) = error { wait = max(wait, retryAfter) }
                // A refused token is an error in /readyz, logged once a minute; the poll goes on
                // at the backoff's cap (the token may be replaced while the relay runs).
                if error.refusesCredentials {
                    credentials.refused("TELEGRAM_BOT_TOKEN", reason: error.reason)
                } else {
                    logger.warning("telegram: polling failed; trying again", metadata: ["reason": "\(error.reason)", "telegram.retry_in": "\(wait)"])
                }
                try? await clock.sleep(for: wait)
            }
        }
    }

    /// Handles a batch in order, moving `offset` past each update stored; false when one could
    /// not be (it and those after it are asked for again).
    private func handle(_ updates: [TelegramPolledUpdate], offset: inout Int64?) async -> Bool {
        for polled in updates {
            let update: TelegramUpdate
            switch polled.update {
            case .success(let read): update = read
            case .failure(let problem):
                // Not an update the relay can read: nothing to store, so confirm it (when it
                // says which it is) rather than be sent it again forever.
                PayloadDecoding.dropped(problem, platform: "telegram", logger: logger)
                if let id = polled.id { offset = id + 1 }
                continue
            }
            do {
                try await inbound.handle(update)
            } catch let error as TelegramBotNameUnknown {
                logger.notice(
                    "telegram: an update names a bot, and this bot's name is not known yet; it will be asked for again", metadata: ["reason": "\(error)"])
                return false
            } catch {
                logger.error("telegram: could not store an update; it will be asked for again", metadata: ["error": "\(error)"])
                return false
            }
            offset = update.id + 1
        }
        return true
    }
}

/// Where a poller got to, kept in the `telegram.poll` lease for the next one: the offset, the
/// bot it belongs to, and when it was saved.
struct TelegramPollState: Sendable, Hashable {
    var bot: String
    var offset: Int64
    var savedAt: Date

    /// Telegram keeps an update for 24 hours: an older offset confirms nothing still there, and
    /// after a week without updates Telegram may number the next ones below it, which such an
    /// offset would confirm unseen.
    static let freshFor: Duration = .seconds(86_400)

    init(bot: String, offset: Int64, savedAt: Date) {
        self.bot = bot
        self.offset = offset
        self.savedAt = savedAt
    }

    /// What `saved` writes.
    private struct Saved: Decodable {
        var bot: String
        var offset: Int64
        var savedAt: Double

        enum CodingKeys: String, CodingKey {
            case bot, offset
            case savedAt = "saved_at"
        }
    }

    /// Reads what `saved` wrote; nil for anything else.
    init?(saved text: String) {
        guard let saved = try? JSONDecoder().decode(Saved.self, from: Data(text.utf8)), saved.savedAt.isFinite else { return nil }
        self.init(bot: saved.bot, offset: saved.offset, savedAt: Date(timeIntervalSince1970: saved.savedAt))
    }

    var saved: String {
        let json: JSONValue = ["bot": .string(bot), "offset": .int(Int(offset)), "saved_at": .double(savedAt.timeIntervalSince1970)]
        return String(decoding: json.encoded(), as: UTF8.self)
    }

    /// The offset to start from, when it is `bot`'s and fresh: another bot's would confirm (drop)
    /// every update of this one numbered below it.
    func offset(for bot: String, now: Date) -> Int64? {
        guard self.bot == bot, now.duration(since: savedAt) < Self.freshFor else { return nil }
        return offset
    }
}
