public import Logging
public import RelayCore
public import ServiceLifecycle

/// Ages stored data out while the relay runs: at start and then every `interval`, it deletes
/// finished outbox entries (they hold reply text) older than the delivery policy keeps them,
/// history older than `relay.historyDays`, and applies retention to history already stored (a
/// user or channel that turned retention `off` loses its stored runs, one under `metadata` their
/// texts). A failed pass is logged and counted; the next one tries again.
///
/// Replicas sharing a store (``Store/isShared``) purge one at a time: a pass first takes the `retention` lease for an
/// interval (the same holder renews it at its next pass), and a replica that finds another
/// holding it skips its pass. If the holder dies, another takes over within an interval.
public final class DataRetention: Service, Sendable {
    let store: any Store
    let clock: any RelayClock
    let interval: Duration
    /// How long sent and failed outbox entries are kept.
    let outboxKeep: Duration
    let relay: RelayConfiguration
    let logger: Logger
    /// This process, as the lease's holder.
    let holder: String

    public init(
        store: any Store, clock: any RelayClock, interval: Duration, outboxKeep: Duration, relay: RelayConfiguration, logger: Logger,
        holder: String = "this process"
    ) {
        self.holder = holder
        self.store = store
        self.clock = clock
        self.interval = max(.seconds(1), interval)
        self.outboxKeep = outboxKeep
        self.relay = relay
        self.logger = logger
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await self.purge()
                try await self.clock.sleep(for: self.interval)
            }
        }
    }

    /// One pass over the outbox and history.
    func purge() async {
        let now = clock.now
        do {
            // A store of one process needs no turn (and the lease would be a write a pass need not make).
            if store.isShared, try await store.acquireLease("retention", holder: holder, until: now + interval, now: now) == nil {
                logger.debug("retention: another replica purges this interval")
                return
            }
            try await store.purgeOutbox(before: now - outboxKeep)
            try await store.purgeExpiredClaims(now: now)
            let deleted = try await store.purgeHistory(before: now - .seconds(86_400 * relay.historyDays), defaultRetention: relay.defaultRetention)
            if deleted > 0 { logger.info("retention: history runs deleted", metadata: ["count": "\(deleted)"]) }
            // The ledger ages with history: the same days, the same retention settings.
            let checks = try await store.purgeLedger(before: now - .seconds(86_400 * relay.historyDays), defaultRetention: relay.defaultRetention)
            if checks > 0 { logger.info("retention: ledger entries deleted", metadata: ["count": "\(checks)"]) }
            RelayMetrics.retentionPass(outcome: "ok")
        } catch {
            RelayMetrics.retentionPass(outcome: "failed")
            logger.error("retention: could not purge old data; trying again at the next pass", metadata: ["error": "\(error)"])
        }
    }
}
