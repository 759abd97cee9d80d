import RelayCore
import Synchronization

public import struct Foundation.Date

/// Paces the messages the bot sends so Telegram never has cause to answer 429.
///
/// Telegram's published limits, all enforced at once:
/// - **per chat**: at most one message per `perChatInterval` (1 s);
/// - **per group** (a chat id below zero: groups, supergroups, channels): at most
///   `groupPerMinute` (20) in any rolling minute;
/// - **overall**: at most `globalPerSecond` (30) in any rolling second, across every chat.
///
/// `reserve` books the earliest instant that satisfies all three and says how long until it, so
/// concurrent callers get distinct instants and each sleeps (on its own clock) until its own.
/// The limiter itself never sleeps and never reads a clock: callers pass `now`, so tests drive
/// it with a manual clock. A 429 still happens (another bot process, Telegram's hidden limits):
/// `pause(chat:until:)` then holds the chat until Telegram's `retry_after` has passed.
///
/// Memory stays bounded: windows keep only instants that can still matter, and chats idle for
/// more than a minute are forgotten.
public final class TelegramRateLimiter: Sendable {
    /// What `reserve` did.
    public enum Reservation: Sendable, Hashable {
        /// An instant is booked: send after `wait` (zero: now).
        case granted(wait: Duration)
        /// Nothing is booked: the earliest instant is `wait` away, longer than the caller
        /// would wait. The caller hands the message back as rate limited for that long.
        case refused(wait: Duration)
    }

    public let perChatInterval: Duration
    public let groupPerMinute: Int
    public let globalPerSecond: Int
    /// No message goes before this instant (nanoseconds since 1970): see `init`.
    let quietUntil: Int64
    /// Added to every interval and window (see `init`).
    public let margin: Duration

    /// The rolling window of the per-group limit.
    static let groupWindow: Duration = .seconds(60)
    /// The rolling window of the overall limit.
    static let globalWindow: Duration = .seconds(1)
    /// A chat whose last booked instant (and pause) is this far in the past is forgotten.
    static let idleAfter: Duration = .seconds(60)

    /// One chat's bookings, in nanoseconds since 1970 (integers, so windows compare exactly).
    private struct Chat {
        /// The earliest instant its next message may go: the last booked one plus the interval,
        /// or the end of a pause.
        var nextSlot = Int64.min
        /// Until when Telegram asked this chat to wait.
        var pausedUntil = Int64.min
        /// Booked instants in the last `groupWindow`, oldest first (groups only).
        var recent: [Int64] = []
        /// An instant booked ahead of the send (`takeTurnIfNow`), which the send's own `reserve`
        /// takes instead of booking another.
        var taken: TakenTurn?
    }

    /// A turn booked ahead, and what its booking changed, so a turn used too late can be undone.
    private struct TakenTurn {
        var instant: Int64
        /// The chat's `nextSlot` before the booking.
        var previousNextSlot: Int64
    }

    private struct State {
        var chats: [Int64: Chat] = [:]
        /// Booked instants of every chat within `globalWindow` of now or later, sorted.
        var sends: [Int64] = []
        var lastSweep = Int64.min
    }

    private let state = Mutex(State())

    /// - Parameters:
    ///   - quietUntil: no message is booked before it. A process that starts does not know what
    ///     the one before it sent in its last second (a restart, a crash); keeping the first
    ///     second after start quiet keeps the per-chat and overall limits across it.
    ///   - margin: added to the per-chat interval and to both windows. Telegram counts messages
    ///     as they arrive, not as they were booked; on a busy machine a message booked earlier can
    ///     leave later than one booked after it, and two bookings exactly a window apart can then
    ///     arrive inside one window. The margin absorbs that jitter, at the cost of a slightly
    ///     lower sustained rate (30 per 1.15 s overall with 150 ms).
    public init(
        perChatInterval: Duration = .seconds(1), groupPerMinute: Int = 20, globalPerSecond: Int = 30, quietUntil: Date? = nil,
        margin: Duration = .zero
    ) {
        self.margin = max(.zero, margin)
        self.perChatInterval = max(.zero, perChatInterval)
        self.groupPerMinute = max(1, groupPerMinute)
        self.globalPerSecond = max(1, globalPerSecond)
        self.quietUntil = quietUntil.map(Self.nanoseconds) ?? Int64.min
    }

    /// Books the earliest instant at which a message to `chat` keeps every limit, unless it is
    /// more than `maxWait` away (then nothing is booked).
    public func reserve(chat: Int64, now: Date, maxWait: Duration? = nil) -> Reservation {
        reserve(chat: chat, now: now, maxWait: maxWait, takingAhead: false)
    }

    /// `reserve`; a send (`takingAhead` false) first takes the turn taken ahead for it, if any,
    /// and a turn taken ahead (`takingAhead`) is kept for the send.
    private func reserve(chat: Int64, now: Date, maxWait: Duration?, takingAhead: Bool) -> Reservation {
        let now = Self.nanoseconds(now)
        let interval = Self.nanoseconds(perChatInterval + margin)
        let groupWindow = Self.nanoseconds(Self.groupWindow + margin)
        let globalWindow = Self.nanoseconds(Self.globalWindow + margin)
        let isGroup = chat < 0
        return state.withLock { state in
            if !takingAhead, let taken = state.chats[chat]?.taken {
                state.chats[chat]?.taken = nil
                if taken.instant >= now - Self.nanoseconds(Self.lateTolerance) { return .granted(wait: .nanoseconds(max(0, taken.instant - now))) }
                // Used too late (the delivery was slow to start): the booking is undone and the
                // message booked at the instant it really leaves. Honoured late, it would leave
                // together with messages booked after it, more in one second than the limits
                // allow though each was booked within them.
                Self.undo(taken, chat: chat, in: &state)
            }
            sweepIfDue(&state, now: now)
            // Instants this old cannot share a window with one at `now` or later.
            state.sends.removeFirst(state.sends.prefix { $0 <= now - globalWindow }.count)
            var record = state.chats[chat] ?? Chat()
            record.recent.removeFirst(record.recent.prefix { $0 <= now - groupWindow }.count)

            var earliest = max(now, record.nextSlot, quietUntil)
            if isGroup, record.recent.count >= groupPerMinute {
                // A chat's instants only grow, so only the window ending at the new one matters.
                earliest = max(earliest, record.recent[record.recent.count - groupPerMinute] + groupWindow)
            }
            let slot = Self.earliestSlot(from: earliest, among: state.sends, limit: globalPerSecond, window: globalWindow)
            let wait = Duration.nanoseconds(slot - now)
            if let maxWait, wait > maxWait {
                return .refused(wait: wait)
            }
            if takingAhead { record.taken = TakenTurn(instant: slot, previousNextSlot: record.nextSlot) }
            record.nextSlot = slot + interval
            if isGroup { record.recent.append(slot) }
            state.chats[chat] = record
            state.sends.insert(slot, at: state.sends.partitioningIndex { $0 > slot })
            return .granted(wait: wait)
        }
    }

    /// For the outbox, before it starts a delivery: when a message to `chat` may go now, books
    /// that instant and returns zero — the send's own `reserve` then takes it, so the message
    /// neither waits nor is booked twice; otherwise books nothing and returns how long until it
    /// could go. A turn the send comes for more than `lateTolerance` later (a delivery slow to
    /// start: a loaded machine, a slow store) is undone and booked again at the send's instant;
    /// one never used (the delivery failed before sending) is undone by the next `reserve` for
    /// the chat.
    public func takeTurnIfNow(chat: Int64, now: Date) -> Duration {
        guard case .granted = reserve(chat: chat, now: now, maxWait: .zero, takingAhead: true) else { return wait(chat: chat, now: now) }
        return .zero
    }

    /// How late a booked instant may be used and still count as kept: the pacing margin (150 ms)
    /// absorbs lateness up to it. A message later than this is booked again (here for a turn
    /// taken ahead, in `TelegramBotClient.waitForTurn` for a sleeper that woke late).
    public static let lateTolerance: Duration = .milliseconds(100)

    /// Takes back a turn taken ahead: its instant leaves the overall and group windows, and the
    /// chat's next slot is what it was before.
    private static func undo(_ taken: TakenTurn, chat: Int64, in state: inout State) {
        if let index = state.sends.firstIndex(of: taken.instant) { state.sends.remove(at: index) }
        guard var record = state.chats[chat] else { return }
        if let index = record.recent.lastIndex(of: taken.instant) { record.recent.remove(at: index) }
        record.nextSlot = max(taken.previousNextSlot, record.pausedUntil)
        state.chats[chat] = record
    }

    /// How long until a message to `chat` would be booked, without booking it (zero: now): for
    /// the outbox, which leaves a message that must wait queued rather than waiting in a slot.
    public func wait(chat: Int64, now: Date) -> Duration {
        let now = Self.nanoseconds(now)
        let groupWindow = Self.nanoseconds(Self.groupWindow + margin)
        return state.withLock { state in
            let record = state.chats[chat] ?? Chat()
            var earliest = max(now, record.nextSlot, record.pausedUntil, quietUntil)
            let recent = record.recent.filter { $0 > now - groupWindow }
            if chat < 0, recent.count >= groupPerMinute {
                earliest = max(earliest, recent[recent.count - groupPerMinute] + groupWindow)
            }
            return Duration.nanoseconds(overallSlot(from: earliest, in: state, now: now) - now)
        }
    }

    /// How long until a message to any chat would be booked (the overall limit, the quiet
    /// start), without booking it.
    public func overallWait(now: Date) -> Duration {
        let now = Self.nanoseconds(now)
        return state.withLock { state in
            Duration.nanoseconds(overallSlot(from: max(now, quietUntil), in: state, now: now) - now)
        }
    }

    /// The earliest instant from `start` the overall limit allows, reading the bookings only.
    private func overallSlot(from start: Int64, in state: State, now: Int64) -> Int64 {
        let globalWindow = Self.nanoseconds(Self.globalWindow + margin)
        let current = state.sends.drop { $0 <= now - globalWindow }
        return Self.earliestSlot(from: start, among: Array(current), limit: globalPerSecond, window: globalWindow)
    }

    /// Records that a message to `chat` was answered at `at`: its next message goes no sooner
    /// than one interval after that. Telegram saw the message before it answered, so spacing from
    /// the answer keeps the per-chat limit however late the message left after its booked
    /// instant (a busy process, a slow connection): the margin alone only covers delays up to it.
    public func sent(chat: Int64, at: Date) {
        let after = Self.nanoseconds(at) + Self.nanoseconds(perChatInterval)
        state.withLock { state in
            guard var record = state.chats[chat] else { return }
            record.nextSlot = max(record.nextSlot, after)
            state.chats[chat] = record
        }
    }

    /// Holds `chat` until `until` (Telegram's `retry_after` after a 429): no instant before it
    /// is booked, and `pausedUntil` tells callers already booked earlier to stand down.
    public func pause(chat: Int64, until: Date) {
        let until = Self.nanoseconds(until)
        state.withLock { state in
            var record = state.chats[chat] ?? Chat()
            record.nextSlot = max(record.nextSlot, until)
            record.pausedUntil = max(record.pausedUntil, until)
            state.chats[chat] = record
        }
    }

    /// The end of `chat`'s pause when it is still paused at `now`; nil otherwise.
    public func pausedUntil(chat: Int64, now: Date) -> Date? {
        let now = Self.nanoseconds(now)
        guard let until = state.withLock({ $0.chats[chat]?.pausedUntil }), until > now else { return nil }
        return Date(timeIntervalSince1970: Double(until) / 1e9)
    }

    /// How many chats the limiter remembers (for tests of its memory bound).
    var trackedChatCount: Int { state.withLock { $0.chats.count } }

    // MARK: - Instants

    /// The earliest instant at or after `start` that can join `sends` (sorted) with no window
    /// `[s, s + window)` holding more than `limit` of them.
    ///
    /// Instants that break the limit form a union of full windows, each of which can be slid
    /// right to start at a booked instant; so the answer is `start` or some `send + window`.
    static func earliestSlot(from start: Int64, among sends: [Int64], limit: Int, window: Int64) -> Int64 {
        if fits(start, among: sends, limit: limit, window: window) { return start }
        for send in sends where send + window > start && fits(send + window, among: sends, limit: limit, window: window) {
            return send + window
        }
        // After the last booked instant's window nothing can be in the way.
        return max(start, (sends.last ?? start) + window)
    }

    /// Whether `slot` can join `sends` (sorted, already within the limit): every run of
    /// `limit + 1` consecutive instants that includes it must span at least `window`.
    static func fits(_ slot: Int64, among sends: [Int64], limit: Int, window: Int64) -> Bool {
        let index = sends.partitioningIndex { $0 > slot }
        func element(_ position: Int) -> Int64 {
            position < index ? sends[position] : position == index ? slot : sends[position - 1]
        }
        let count = sends.count + 1
        for first in max(0, index - limit)...index where first + limit < count {
            if element(first + limit) - element(first) < window { return false }
        }
        return true
    }

    /// Forgets chats idle for `idleAfter`, at most once per `idleAfter`, so memory follows the
    /// chats active in the last two minutes, not every chat ever served.
    private func sweepIfDue(_ state: inout State, now: Int64) {
        let idle = Self.nanoseconds(Self.idleAfter)
        guard state.lastSweep <= now - idle else { return }
        state.lastSweep = now
        let groupWindow = Self.nanoseconds(Self.groupWindow + margin)
        state.chats = state.chats.filter { _, chat in
            chat.nextSlot > now - idle || chat.pausedUntil > now || (chat.recent.last.map { $0 > now - groupWindow } ?? false)
        }
    }

    /// Nanoseconds since 1970; dates beyond ±285 years are clamped so nothing overflows.
    static func nanoseconds(_ date: Date) -> Int64 {
        let seconds = min(9e9, max(-9e9, date.timeIntervalSince1970))
        guard seconds.isFinite else { return 0 }
        return Int64((seconds * 1e9).rounded())
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return min(9_000_000_000, max(-9_000_000_000, seconds)) * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

extension Array where Element == Int64 {
    /// The first index whose element satisfies `belongsAfter`, for a predicate that is false
    /// for a prefix and true for the rest (binary search).
    fileprivate func partitioningIndex(where belongsAfter: (Int64) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongsAfter(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
