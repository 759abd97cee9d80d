import Foundation
import Logging
import RelayCore
import RelayPlatform
import ServiceLifecycle

/// `/sync` long polling, while this replica holds the `matrix.sync` lease: one syncing process
/// per bot, so each event is read once.
///
/// The position (`next_batch`) is kept in the lease's state after each handled batch, and only
/// then: a restart, or a replica taking over, starts from the last batch handled, so nothing is
/// missed, and what a crash makes come again is recognised by its event id (the inbox's dedupe
/// key). The very first sync of a bot starts from now: it reads the rooms' state, not their
/// history, so old commands are not run. Errors back off (jittered, up to 30 s) and reset after
/// a good answer; a graceful shutdown cancels the waiting request at once.
struct MatrixSyncer {
    let api: any MatrixAPI
    let inbound: MatrixInbound
    let identity: MatrixIdentity
    let timeout: Duration
    let clock: any RelayClock
    /// Told when the homeserver refuses the access token and when it takes it again.
    let credentials: CredentialReporter
    let logger: Logger

    /// Only what the relay reads: messages, reactions, redactions (a command withdrawn) and
    /// encrypted events in the timeline, and
    /// whether a room is encrypted; no presence, receipts, typing or account data.
    static let filter =
        #"{"presence":{"types":[]},"account_data":{"types":[]},"room":{"timeline":{"limit":100,"types":["m.room.message","m.reaction","m.room.redaction","m.room.encrypted"]},"state":{"types":["m.room.encryption"]},"ephemeral":{"types":[]},"account_data":{"types":[]}}}"#

    /// Syncs under `grant` until cancelled or a graceful shutdown.
    func run(_ grant: LeaseGrant) async {
        await cancelWhenGracefulShutdown {
            await self.sync(grant: grant)
        }
    }

    private func sync(grant: LeaseGrant) async {
        var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(30))
        var me: String?
        var since: String?
        while !Task.isCancelled {
            // Who the bot is comes first: its own events are told apart by it, and a position
            // saved for another account means nothing to this one.
            if me == nil {
                let known: MatrixIdentity.Known
                do throws(MatrixAPIError) {
                    known = try await identity.lookUp()
                } catch {
                    if Task.isCancelled { return }
                    report(error, doing: "could not ask who the bot is (whoami)")
                    try? await clock.sleep(for: backoff.next())
                    continue
                }
                me = known.user
                since = grant.state.flatMap(MatrixSyncState.init(saved:)).flatMap { $0.user == known.user ? $0.since : nil }
                logger.info("matrix: syncing", metadata: ["matrix.user": "\(known.user)", "matrix.resumed": "\(since != nil)"])
            }
            guard let user = me else { continue }
            do throws(MatrixAPIError) {
                let first = since == nil
                let answer = try await api.sync(since: since, timeout: first ? .zero : timeout, filter: Self.filter)
                backoff.reset()
                credentials.accepted("MATRIX_ACCESS_TOKEN")
                let next = answer.nextBatch
                guard !next.isEmpty else { throw .malformed(endpoint: "sync", reason: "field `next_batch` is null or empty") }
                if await handle(answer, me: user, history: first) {
                    since = next
                    _ = await grant.saveState(MatrixSyncState(user: user, since: next).saved)
                } else {
                    try? await clock.sleep(for: backoff.next())
                }
            } catch {
                if Task.isCancelled { return }
                var wait = backoff.next()
                if case .rateLimited(_, let retryAfter) = error { wait = max(wait, retryAfter) }
                report(error, doing: "sync failed")
                try? await clock.sleep(for: wait)
            }
        }
    }

    /// A refused token is an error in /readyz, logged once a minute (the sync goes on at the
    /// backoff's cap: the token may be replaced); anything else a warning per retry.
    private func report(_ error: MatrixAPIError, doing what: String) {
        if error.refusesCredentials {
            credentials.refused("MATRIX_ACCESS_TOKEN", reason: error.reason)
        } else {
            logger.warning("matrix: \(what); trying again", metadata: ["reason": "\(error.reason)"])
        }
    }

    /// Handles one sync answer: invitations, then each joined room's news. False when something
    /// to run could not be stored (the batch is asked for again). `history`: the first sync,
    /// whose timelines are the past, not news.
    private func handle(_ answer: MatrixSyncResponse, me: String, history: Bool) async -> Bool {
        for (room, state) in answer.invites {
            guard await inbound.invited(to: room, state: state, me: me) else { return false }
        }
        for (room, joined) in answer.joined {
            let timeline = joined.timeline.compactMap { try? $0.get() }
            if (joined.state + timeline).contains(where: { $0.type == "m.room.encryption" || $0.type == "m.room.encrypted" }) {
                await inbound.encrypted(room: room)
            }
            guard !history else { continue }
            for read in joined.timeline {
                let event: MatrixEvent
                switch read {
                case .success(let readable): event = readable
                case .failure(let problem):
                    // Not even an object: nothing to run, and the batch moves on without it.
                    PayloadDecoding.dropped(problem, platform: "matrix", logger: logger)
                    continue
                }
                do {
                    try await inbound.handle(event, room: room, me: me)
                } catch {
                    logger.error("matrix: could not store an event; the batch will be asked for again", metadata: ["error": "\(error)"])
                    return false
                }
            }
        }
        return true
    }
}

/// Where a syncer got to, kept in the `matrix.sync` lease for the next one: the position and
/// the account it belongs to.
struct MatrixSyncState: Sendable, Hashable {
    var user: String
    var since: String

    init(user: String, since: String) {
        self.user = user
        self.since = since
    }

    /// What `saved` writes.
    private struct Saved: Decodable {
        var user: String
        var since: String
    }

    /// Reads what `saved` wrote; nil for anything else.
    init?(saved text: String) {
        guard let saved = try? JSONDecoder().decode(Saved.self, from: Data(text.utf8)), !saved.since.isEmpty else { return nil }
        self.init(user: saved.user, since: saved.since)
    }

    var saved: String {
        String(decoding: JSONValue.object(["user": .string(user), "since": .string(since)]).encoded(), as: UTF8.self)
    }
}
