public import Logging
public import RelayCore
public import RelayPipeline
public import ServiceLifecycle
import Synchronization

public import struct Foundation.Date

/// Keeps a connection a platform allows only once per bot (the Discord gateway, Telegram's long
/// polling, Slack Socket Mode) on exactly one replica: the one that holds its lease in the
/// shared store (docs/replicas.md).
///
/// Every replica runs one per connection. Each asks for the lease every `renewInterval`; the
/// one granted runs the connection (`body`) and renews every `renewInterval` while the others
/// keep asking. When the holder dies, its lease lapses after `duration` and the next asker takes
/// it: with the defaults (8 s, 2 s) a connection moves within 10 s of its holder's death.
///
/// The connection stops before anyone else may take it over: when a renewal is refused, or
/// when renewals failed (the store unreachable) until `margin` before the lease would lapse by
/// this replica's own clock, `body` is cancelled. `margin` covers the time a connection takes
/// to stop and the difference between the replicas' clocks; should it ever fall short, the
/// fencing token still keeps the stale holder from overwriting its successor's state.
///
/// A graceful shutdown lets `body` finish as the service it is (it sees the shutdown itself:
/// the gateway saves where it was before it closes), then releases the lease, so a successor
/// takes it over at once rather than after it lapses. Cancellation releases nothing: to the
/// other replicas a cancelled holder is a dead one, and its lease lapses.
///
/// Without a store (`store` nil), the connection is always held here, as by a single process.
public struct ConnectionLease: Sendable {
    /// How long a lease lasts and how often it is renewed.
    public struct Timing: Sendable, Hashable {
        /// How long a grant lasts unless renewed: the longest a dead holder's connection stays
        /// unowned.
        public var duration: Duration
        /// How often the holder renews, and how often the others ask.
        public var renewInterval: Duration
        /// How long before its lease would lapse, by its own clock, a holder that could not
        /// renew stops its connection. `renewInterval + margin` must stay well under `duration`.
        public var margin: Duration

        /// Takeover within `duration + renewInterval` = 10 s, with three renewals to fail before
        /// a holder gives up.
        public init(duration: Duration = .seconds(8), renewInterval: Duration = .seconds(2), margin: Duration = .seconds(1)) {
            self.duration = duration
            self.renewInterval = renewInterval
            self.margin = margin
        }
    }

    /// The lease's name in the store: `telegram.poll`, `discord.gateway`, `slack.socket-mode`.
    public let name: String
    /// This replica, as the store records it (`PlatformContext.replica`).
    public let holder: String
    public let timing: Timing
    /// The store is this process's alone (SQLite, memory): no other replica can take the lease,
    /// so renewals that fail or come back late never stop the connection. The lease is still
    /// taken and renewed there, for the state it keeps across restarts (Telegram's offset, the
    /// gateway's session). On a shared store a late renewal must stop it (`watch`).
    public let isExclusive: Bool
    let store: (any LeaseStore)?
    let clock: any RelayClock
    let logger: Logger

    public init(
        name: String, holder: String, store: (any LeaseStore)?, exclusive: Bool = false, clock: any RelayClock, timing: Timing = Timing(),
        logger: Logger
    ) {
        self.name = name
        self.holder = holder
        self.store = store
        self.isExclusive = exclusive
        self.clock = clock
        self.timing = timing
        var logger = logger
        logger[metadataKey: "lease"] = .string(name)
        self.logger = logger
    }

    /// Runs `body` whenever this replica holds the lease, until cancelled, a graceful shutdown,
    /// or `body` returning or throwing on its own (it is then not started again, as a service
    /// that ended). Each grant starts a new `body`, which must stop promptly when cancelled.
    public func run(whileHeld body: @escaping @Sendable (LeaseGrant) async throws -> Void) async throws {
        guard let store else {
            try await body(LeaseGrant(name: name, token: 0, state: nil, isShared: false) { _ in false })
            return
        }
        var (failing, waiting) = (false, false)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let start = clock.now
            var granted: (token: Int64, state: String?)?
            do {
                if let token = try await store.acquireLease(name, holder: holder, until: start + timing.duration, now: start) {
                    granted = (token, try await store.leaseState(name))
                } else if !waiting {
                    // Once per wait, so the operator sees why this replica holds no connection.
                    logger.info("connection lease: another replica holds the connection; standing by")
                }
                waiting = granted == nil
                failing = false
            } catch {
                // The first failure of a streak says so; the rest would only repeat it every
                // renewInterval.
                logger.log(
                    level: failing ? .debug : .warning, "connection lease: the store did not answer; asking again",
                    metadata: ["error": "\(error)"])
                failing = true
            }
            if let granted, try await hold(token: granted.token, until: start + timing.duration, state: granted.state, store: store, body: body) {
                return
            }
            try? await cancelWhenGracefulShutdown { [clock, timing] in try await clock.sleep(for: timing.renewInterval) }
        }
    }

    /// How holding the lease ended.
    private enum Ending: Sendable {
        case bodyReturned
        case bodyThrew(any Error)
        case lost(reason: String)
    }

    /// Runs `body` under the grant while renewing it; true when running should stop (`body`
    /// ended on its own or was cancelled with this task), false when the lease was lost.
    private func hold(
        token: Int64, until: Date, state: String?, store: any LeaseStore, body: @escaping @Sendable (LeaseGrant) async throws -> Void
    ) async throws -> Bool {
        logger.notice(
            "connection lease taken: this replica holds the connection",
            metadata: ["lease.token": "\(token)", "lease.holder": .string(holder), "lease.resumes": "\(state != nil)"])
        let (name, logger) = (name, logger)
        let end = LeaseEnd(until)
        let grant = LeaseGrant(name: name, token: token, state: state, isShared: true, confirmed: { [duration = timing.duration] in end.until - duration }) {
            value in
            do {
                return try await store.saveLeaseState(name, value: value, token: token)
            } catch {
                logger.warning("connection lease: could not save the connection's state", metadata: ["error": "\(error)"])
                return false
            }
        }
        let ending = await withTaskGroup(of: Ending?.self) { group in
            group.addTask {
                do {
                    try await body(grant)
                    return .bodyReturned
                } catch {
                    return .bodyThrew(error)
                }
            }
            group.addTask { await self.renew(token: token, end: end, store: store) }
            // A store of one process stalled (a loaded machine, a long write ahead of the
            // renewal) had every connection restarted for nothing.
            if !isExclusive { group.addTask { await self.watch(end) } }
            // Whichever ends first ends the others: a lost lease cancels the connection, and the
            // group waits for it to stop before anyone asks for the lease again.
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .lost(reason: "cancelled")
        }
        switch ending {
        case .lost(let reason):
            logger.notice("connection lease lost: the connection stopped here", metadata: ["lease.token": "\(token)", "reason": .string(reason)])
            return Task.isCancelled
        case .bodyReturned, .bodyThrew:
            if !Task.isCancelled {
                do {
                    try await store.releaseLease(name, holder: holder)
                    logger.info("connection lease released", metadata: ["lease.token": "\(token)"])
                } catch {
                    logger.warning("connection lease: could not release; it lapses on its own", metadata: ["error": "\(error)"])
                }
            }
            if case .bodyThrew(let error) = ending, !(error is CancellationError) { throw error }
            return true
        }
    }

    /// Renews every `renewInterval`; returns when the lease is lost (refused, or taken by
    /// another meanwhile), nil when cancelled. A failed renewal is tried again at the next
    /// interval: `watch` stops the connection if none succeeds in time.
    private func renew(token: Int64, end: LeaseEnd, store: any LeaseStore) async -> Ending? {
        var failing = false
        while true {
            do { try await clock.sleep(for: timing.renewInterval) } catch { return nil }
            let start = clock.now
            do {
                let renewed = try await store.acquireLease(name, holder: holder, until: start + timing.duration, now: start)
                // The same token proves no one held the lease in between, even if it lapsed.
                guard renewed == token else { return .lost(reason: renewed == nil ? "another replica holds it" : "it changed hands meanwhile") }
                end.extend(to: start + timing.duration)
                if failing { logger.info("connection lease: renewed again") }
                failing = false
            } catch {
                if Task.isCancelled { return nil }
                if !failing {
                    logger.warning(
                        "connection lease: could not renew; the connection stops before the lease lapses unless a renewal succeeds",
                        metadata: ["error": "\(error)"])
                }
                failing = true
            }
        }
    }

    /// Returns once the lease is `margin` from lapsing by this replica's clock; nil when cancelled.
    private func watch(_ end: LeaseEnd) async -> Ending? {
        while true {
            let stopAt = end.until - timing.margin
            if clock.now >= stopAt { return .lost(reason: "it could not be renewed in time") }
            do { try await clock.sleep(until: stopAt) } catch { return nil }
        }
    }
}

extension ConnectionLease {
    /// `body` as a service the server runs: run whenever the lease is held here.
    public func service(whileHeld body: @escaping @Sendable (LeaseGrant) async throws -> Void) -> any Service {
        LeasedConnection(lease: self, body: body)
    }
}

/// What a connection is handed while its replica holds the lease.
public struct LeaseGrant: Sendable {
    public let name: String
    /// The fencing token of this grant; 0 when there is no shared store.
    public let token: Int64
    /// What the previous holder saved for its successors, read when the lease was taken; nil
    /// when nothing was.
    public let state: String?
    /// Whether the lease is kept in a store that outlives this holder (another replica or this
    /// process's next start reads its state); false when this process holds it alone.
    public let isShared: Bool
    private let save: @Sendable (String) async -> Bool
    private let confirmed: @Sendable () -> Date

    public init(
        name: String, token: Int64, state: String?, isShared: Bool, confirmed: @escaping @Sendable () -> Date = { .distantFuture },
        save: @escaping @Sendable (String) async -> Bool
    ) {
        self.name = name
        self.token = token
        self.state = state
        self.isShared = isShared
        self.confirmed = confirmed
        self.save = save
    }

    /// When the store last confirmed the lease as this replica's: the moment its latest granted
    /// ask (the grant, or a renewal) was sent, by this replica's clock. The store granted it
    /// after that moment, so nobody else held the lease then; whether anyone does now is known
    /// only at the next renewal. `distantFuture` without a shared store.
    public var confirmedAt: Date { confirmed() }

    /// Keeps `value` for the next holder; false when it was not kept: the lease was lost (a
    /// successor's state is never overwritten), the store failed, or there is no store.
    public func saveState(_ value: String) async -> Bool {
        await save(value)
    }
}

/// When the current grant ends, as the last renewal set it; read by the watch.
private final class LeaseEnd: Sendable {
    private let value: Mutex<Date>

    init(_ until: Date) {
        value = Mutex(until)
    }

    var until: Date { value.withLock { $0 } }

    func extend(to until: Date) {
        value.withLock { $0 = max($0, until) }
    }
}

/// A connection run under its lease, as one of the server's services.
private struct LeasedConnection: Service, CustomStringConvertible {
    let lease: ConnectionLease
    let body: @Sendable (LeaseGrant) async throws -> Void

    func run() async throws {
        try await lease.run(whileHeld: body)
    }

    /// How the service group names it in its log lines.
    var description: String { "LeasedConnection(\(lease.name))" }
}
