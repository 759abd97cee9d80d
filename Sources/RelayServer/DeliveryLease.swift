import RelayPipeline
import RelayPlatform
import ServiceLifecycle

/// A platform whose limits count per bot has its replies leave through one replica of a shared
/// store: the holder of the platform's delivery lease (`<platform>.delivery`; docs/replicas.md).
///
/// Telegram (30 messages a second, one a second per chat, 20 a minute per group) and Discord
/// (its route buckets and 50 requests a second) count per bot, not per process. Each adapter
/// already paces exactly what one process sends; with one sender per platform that pacing is
/// the bot's, at the cost of no round trip per message (a limiter shared through PostgreSQL
/// would cost one per send). Runs still spread over every replica; only the sending goes through
/// the holder, which any replica's reply reaches by its claim (woken by `relay_outbox`). A
/// platform whose sender says its limits do not count per bot (`limitsCountPerBot`, Slack) is
/// sent by whichever replica ran the command.
///
/// When the holder dies, its lease lapses and another replica takes the sending over within the
/// connection lease's bound (10 s by default); replies wait meanwhile, none is lost.
struct DeliveryLease: Service {
    let platform: String
    let lease: ConnectionLease
    let worker: OutboxWorker

    func run() async throws {
        try await lease.run { [platform, worker] _ in await worker.deliverWhileHeld(platform) }
    }

    static func name(of platform: String) -> String { "\(platform).delivery" }
}

extension DeliveryLease {
    /// One per platform whose limits count per bot, on a shared store; none on a store of one
    /// process, which delivers every platform itself. The worker is told to leave those
    /// platforms' replies to the lease's holder.
    static func services(senders: [any ReplySender], worker: OutboxWorker, _ dependencies: RelayApplication.Dependencies) -> [DeliveryLease] {
        guard dependencies.store.isShared else { return [] }
        return senders.filter(\.limitsCountPerBot).map(\.platform).map { platform in
            worker.deliverOnlyUnderLease(platform)
            let lease = ConnectionLease(
                name: name(of: platform), holder: dependencies.replica, store: dependencies.store, clock: dependencies.clock,
                timing: dependencies.configuration.connectionLease, logger: dependencies.logger)
            return DeliveryLease(platform: platform, lease: lease, worker: worker)
        }
    }
}
