import RelayCore
import RelayPipeline
import RelayPlatform
import ServiceLifecycle

/// A platform whose limits count per bot has its replies leave through one replica of a shared
/// store: the holder of the platform's delivery lease (`<platform>.delivery`, or the lease of
/// the connection its replies leave on: `DeliveryLimits.deliveryLeaseName`; docs/replicas.md).
///
/// Where that is a connection's lease (IRC), this service and the connection ask for the same
/// lease as the same holder: the store grants both, or neither, so the replica that holds the
/// socket is the one that sends.
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
/// connection lease's bound (10 s by default) and its quiet (`timing`); replies wait meanwhile,
/// none is lost.
struct DeliveryLease: Service {
    let platform: String
    let lease: ConnectionLease
    let worker: OutboxWorker

    func run() async throws {
        let (window, quiet) = Self.timing(lease.timing)
        try await lease.run { [platform, worker] grant in
            await worker.deliverWhileHeld(platform, quiet: quiet) { grant.confirmedAt + window }
        }
    }

    /// How long the holder sends after each confirmation of its lease (`window`: the time
    /// between renewals, and a second for the renewal to come back), and how long a new holder
    /// waits before its first send (`quiet`: the window, and the platforms' one-second rate
    /// window). With the defaults (renewals every 2 s), 3 s and 4 s.
    ///
    /// A holder whose lease was taken from it learns so at its next renewal, however late a
    /// loaded store answers; meanwhile it sends only within `window` of its last confirmation,
    /// which came before the lease moved. So its last send comes before its successor's first,
    /// and a second's worth of the platform's limits lies between them.
    static func timing(_ lease: ConnectionLease.Timing) -> (window: Duration, quiet: Duration) {
        let window = lease.renewInterval + .seconds(1)
        return (window, window + .seconds(1))
    }
}

extension DeliveryLease {
    /// One per platform whose limits count per bot, on a shared store; none on a store of one
    /// process, which delivers every platform itself. The worker is told to leave those
    /// platforms' replies to the lease's holder.
    static func services(senders: [any ReplySender], worker: OutboxWorker, _ dependencies: RelayApplication.Dependencies) -> [DeliveryLease] {
        guard dependencies.store.isShared else { return [] }
        return senders.filter(\.limitsCountPerBot).map { sender in
            let platform = sender.platform
            worker.deliverOnlyUnderLease(platform)
            let lease = ConnectionLease(
                name: sender.deliveryLeaseName, holder: dependencies.replica, store: dependencies.store, clock: dependencies.clock,
                timing: dependencies.configuration.connectionLease, logger: dependencies.logger)
            return DeliveryLease(platform: platform, lease: lease, worker: worker)
        }
    }
}
