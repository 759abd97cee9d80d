import Synchronization

public import struct Foundation.Date

/// The edits of answers being written that a platform takes across conversations: a token
/// bucket per key (a Slack workspace; a whole bot elsewhere), so that many answers written at
/// once stay within a limit that counts them together — Slack's `chat.update` per workspace,
/// Telegram's 30 messages a second per bot, Synapse's per-sender rate. An edit the budget
/// refuses waits an interval and shows the latest text then; the whole answer never asks it.
///
/// Each process keeps its own: with replicas, the delivering replica's pacing still holds the
/// platform's limit, and what waits there is at most one text per answer (docs/streaming.md).
public final class EditBudget: Sendable {
    /// Edits a minute, on average.
    public let perMinute: Double
    /// Edits taken at once after a quiet spell.
    public let burst: Double
    private let buckets = Mutex<[String: Bucket]>([:])

    private struct Bucket {
        var tokens: Double
        var at: Date
    }

    /// Past this many keys, those whose bucket has refilled are forgotten (they start full).
    static let keptKeys = 10_000

    public init(perMinute: Double, burst: Int) {
        self.perMinute = max(0, perMinute)
        self.burst = Double(max(1, burst))
    }

    /// Takes one edit for `key` at `now`: false when its bucket is empty.
    public func take(_ key: String = "", now: Date) -> Bool {
        buckets.withLock { buckets in
            if buckets.count > Self.keptKeys {
                buckets = buckets.filter { refilled($0.value, now: now) < burst }
            }
            var bucket = buckets[key] ?? Bucket(tokens: burst, at: now)
            bucket.tokens = refilled(bucket, now: now)
            bucket.at = now
            let taken = bucket.tokens >= 1
            if taken { bucket.tokens -= 1 }
            buckets[key] = bucket
            return taken
        }
    }

    private func refilled(_ bucket: Bucket, now: Date) -> Double {
        min(burst, bucket.tokens + max(0, now.timeIntervalSince(bucket.at)) * perMinute / 60)
    }
}
