import Foundation
import RelayCore
import Synchronization

/// The one progress message of a run: posted once, then edited. A chain's steps are shown at
/// most every `interval`; an answer being written at most every `streaming.interval` and
/// `streaming.maxEdits` times — and its latest text is shown once the interval has passed, even
/// when the model says nothing more meanwhile (`flush`), so what shows is never older than one
/// interval. `close()` at the run's end stops it: nothing of the answer being written comes
/// after the whole answer.
final class ProgressMessage: Sendable {
    /// What to do with a step.
    enum Take: Equatable {
        /// Not shown (too soon after the last, or past the cap).
        case skip
        /// Shown later, at `until`, unless a later step is shown first.
        case wait(until: Date)
        /// Posted: the run's first progress message.
        case post
        /// An edit of the message the entry `id` posted.
        case edit(String)
    }

    private struct State {
        var posted = false
        var lastShown: Date?
        /// When the answer being written was shown last: its pace counts from there, so the first
        /// text shows at once, however recently the placeholder went (the outbox still keeps the
        /// conversation's own pace).
        var lastPartialShown: Date?
        /// Edits that showed an answer being written.
        var partialEdits = 0
        /// The latest text of the answer not shown yet.
        var waiting: RunProgress?
        var flush: Task<Void, Never>?
        var closed = false
        /// The outbox entry that showed the answer last.
        var lastPartial: String?
        /// Shows under way (from `enter` to `leave`): a flush's, or one of the run's own.
        var showing = 0
        /// `close()`, waiting for the shows under way to end.
        var closing: CheckedContinuation<Void, Never>?
    }

    /// The outbox id of the message's first post.
    let id: String
    let interval: Duration
    let streaming: StreamingPace
    let clock: any RelayClock
    private let state = Mutex(State())

    init(id: String, interval: Duration, streaming: StreamingPace = .none, clock: any RelayClock) {
        self.id = id
        self.interval = interval
        self.streaming = streaming
        self.clock = clock
    }

    /// The outbox entry the progress message was posted by, for the result to replace.
    var messageID: String? { state.withLock { $0.posted ? id : nil } }

    /// The outbox entry that showed the answer being written last.
    var lastPartial: String? { state.withLock { $0.lastPartial } }

    func take(_ step: RunProgress) -> Take {
        state.withLock { state in
            guard !state.closed else { return .skip }
            let now = clock.now
            if step.partial != nil {
                guard state.partialEdits < streaming.maxEdits else { return .skip }
                if let last = state.lastPartialShown, now.duration(since: last) < streaming.interval {
                    let due = state.waiting == nil
                    state.waiting = step
                    return due ? .wait(until: last + streaming.interval) : .skip
                }
                state.waiting = nil
                state.partialEdits += 1
                state.lastPartialShown = now
            } else if let last = state.lastShown, now.duration(since: last) < interval {
                return .skip
            }
            state.lastShown = now
            return state.posted ? .edit(id) : .post
        }
    }

    /// `step` waits for the text shown last to be delivered: it is shown an interval from now,
    /// unless a later step is shown first. Returns when.
    func hold(_ step: RunProgress) -> Date {
        state.withLock { state in
            state.waiting = step
            state.partialEdits -= 1
            state.lastShown = clock.now
            state.lastPartialShown = clock.now
            return clock.now + streaming.interval
        }
    }

    /// Shows the text waiting at `until`, through `show`, unless the run ended first.
    func flush(at until: Date, _ show: @escaping @Sendable (RunProgress) async -> Void) {
        let task = Task { [clock] in
            try? await clock.sleep(until: until)
            guard !Task.isCancelled else { return }
            let step = self.state.withLock { state -> RunProgress? in
                state.flush = nil
                defer { state.waiting = nil }
                // Shown now whatever the last show: it waited its interval.
                state.lastShown = nil
                state.lastPartialShown = nil
                return state.closed ? nil : state.waiting
            }
            if let step { await show(step) }
        }
        let previous = state.withLock { state -> Task<Void, Never>? in
            defer { state.flush = task }
            return state.flush
        }
        previous?.cancel()
    }

    func posted() {
        state.withLock { $0.posted = true }
    }

    func shownPartial(_ entry: String) {
        state.withLock { $0.lastPartial = entry }
    }

    /// A show begins (a step taken, then queued in the outbox): false once the run has ended.
    /// Each `true` is ended by `leave()`.
    func enter() -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.showing += 1
            return true
        }
    }

    func leave() {
        let closing = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.showing -= 1
            guard state.showing == 0 else { return nil }
            defer { state.closing = nil }
            return state.closing
        }
        closing?.resume()
    }

    /// The run ended: nothing more is shown, and every show under way is waited for — a flush
    /// that took its step just before may still be queueing it, and it must be queued before
    /// the whole answer, or it would be shown after it.
    func close() async {
        let flush = state.withLock { state -> Task<Void, Never>? in
            state.closed = true
            state.waiting = nil
            return state.flush
        }
        flush?.cancel()
        await flush?.value
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                guard state.showing > 0 else { return true }
                state.closing = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}
