import RelayCore
import Synchronization

import struct Foundation.Date

/// Remembers 429s per endpoint and refuses calls locally until the cooldown has passed.
///
/// The gateway counts every request, refused ones included, so retrying into a 429 only
/// extends it. Endpoints are held separately: `/tribunal` is rate-limited, while
/// `/keyboard/quick` and `/dialog` are not limited by the server at all.
final class RateLimitGate: Sendable {
    private struct Hold {
        var until: Date
        var detail: String
    }

    private let holds = Mutex<[String: Hold]>([:])

    /// If `path` is held back, the error to answer with instead of calling the server.
    func refusal(for path: String, now: Date) -> RateLimitHold? {
        holds.withLock { holds in
            guard let hold = holds[path] else { return nil }
            guard now < hold.until else {
                holds[path] = nil
                return nil
            }
            return RateLimitHold(detail: hold.detail, remaining: hold.until.duration(since: now))
        }
    }

    /// Holds `path` back for `duration` after a 429.
    func hold(_ path: String, for duration: Duration, detail: String, now: Date) {
        let until = now + duration
        holds.withLock { holds in
            // Never shorten a hold another concurrent request has already set.
            if let existing = holds[path], existing.until > until { return }
            holds[path] = Hold(until: until, detail: detail)
        }
    }
}

/// A refusal from the gate: the server's last 429 text and how long is left.
struct RateLimitHold: Sendable {
    var detail: String
    var remaining: Duration

    /// Whole seconds left, at least 1, as `TribunalError.rateLimited` reports them.
    var remainingSeconds: Int {
        let (seconds, attoseconds) = remaining.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}
