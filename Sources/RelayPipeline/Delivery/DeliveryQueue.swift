import Foundation
import RelayCore

/// The entries this process holds leases on and has not started delivering: replies handed over
/// at their run's end, and entries a claim took. Oldest first (by `createdAt`, as claims read
/// the store), so a reply that waited — rescheduled after a 429, or left in the store while the
/// queue was full — goes before younger ones once it can.
///
/// The worker starts the oldest entries that can go now, up to its `maxInFlight` slots; an entry
/// whose conversation or platform must wait (pacing, a platform's own limits) stays here, leased
/// but holding no slot, while younger entries that can go are started past it. Bounded by
/// `capacity` per platform: past it, that platform's replies stay in the store for a later
/// claim, and a platform whose backlog filled its share cannot crowd another out of the queue.
struct DeliveryQueue {
    struct Item {
        var entry: OutboxEntry
        /// Handed over at a run's end (not claimed): its end asks for a claim only when needed.
        var handed: Bool
        var leasedUntil: Date
    }

    /// Entries of one platform at most.
    let capacity: Int
    /// Room a platform must have for a claim to be worth a read of the store: a full platform
    /// draining one entry at a time (paced) is claimed for again only after several.
    let claimBatch: Int
    private(set) var items: [Item] = []
    private var ids: Set<String> = []
    private var counts: [String: Int] = [:]

    init(capacity: Int, claimBatch: Int) {
        self.capacity = max(1, capacity)
        self.claimBatch = min(max(1, claimBatch), self.capacity)
    }

    var count: Int { items.count }
    var isEmpty: Bool { items.isEmpty }

    /// Platforms with no room for another entry: their replies are not handed over.
    var full: Set<String> { Set(counts.filter { $0.value >= capacity }.keys) }

    /// Platforms a claim should leave in the store: too little room for a batch.
    var notWorthAClaim: Set<String> { Set(counts.filter { $0.value > capacity - claimBatch }.keys) }

    /// Adds entries, keeping the oldest first; an entry already here keeps its place.
    mutating func add(_ entries: [OutboxEntry], handed: Bool, leasedUntil: Date) {
        for entry in entries where ids.insert(entry.id).inserted {
            counts[entry.platform, default: 0] += 1
            let item = Item(entry: entry, handed: handed, leasedUntil: leasedUntil)
            // Usually the youngest: appended without a search.
            if let last = items.last, Self.isOlder(entry, than: last.entry) {
                let index = items.firstIndex { Self.isOlder(entry, than: $0.entry) } ?? items.endIndex
                items.insert(item, at: index)
            } else {
                items.append(item)
            }
        }
    }

    /// Takes out, oldest first, up to `limit` entries that `wait` says can go now (a zero wait);
    /// returns them and the earliest instant one left behind can go (nil when none waits).
    /// `wait` is asked only while there is room, so an entry it answers zero for is taken.
    ///
    /// `wait` answers for one entry; `platformWait` for every entry of a platform at once (a
    /// limit across the whole bot), asked once per platform, so a long queue of one paced
    /// platform costs a comparison per entry, not a look at its limiter.
    mutating func takeReady(
        limit: Int, now: Date, platformWait: (String) -> Duration, wait: (OutboxEntry) -> Duration
    ) -> (ready: [Item], nextAt: Date?) {
        guard limit > 0, !items.isEmpty else { return ([], nil) }
        var taken: [Int] = []
        var nextAt: Date?
        var platformWaits: [String: Duration] = [:]
        func later(_ wait: Duration) {
            let at = now + wait
            nextAt = nextAt.map { min($0, at) } ?? at
        }
        for index in items.indices {
            guard taken.count < limit else { break }
            let platform = items[index].entry.platform
            let shared = platformWaits[platform] ?? platformWait(platform)
            platformWaits[platform] = shared
            if shared > .zero {
                later(shared)
                continue
            }
            let own = wait(items[index].entry)
            if own > .zero { later(own) } else { taken.append(index) }
        }
        let ready = taken.map { items[$0] }
        // Usually a prefix: removed in one move of the rest.
        if taken.last.map({ $0 + 1 == taken.count }) == true {
            items.removeFirst(taken.count)
        } else {
            for index in taken.reversed() { items.remove(at: index) }
        }
        for item in ready {
            ids.remove(item.entry.id)
            uncount(item.entry.platform)
        }
        return (ready, nextAt)
    }

    /// Takes out every entry of `platforms`, oldest first: platforms another replica delivers
    /// now (this one lost their delivery lease).
    mutating func removeAll(of platforms: Set<String>) -> [Item] {
        guard !platforms.isEmpty, counts.keys.contains(where: platforms.contains) else { return [] }
        let removed = items.filter { platforms.contains($0.entry.platform) }
        items.removeAll { platforms.contains($0.entry.platform) }
        for item in removed {
            ids.remove(item.entry.id)
            uncount(item.entry.platform)
        }
        return removed
    }

    /// Takes out every entry (a drain at shutdown).
    mutating func removeAll() -> [Item] {
        defer {
            items.removeAll()
            ids.removeAll()
            counts.removeAll()
        }
        return items
    }

    private mutating func uncount(_ platform: String) {
        let left = (counts[platform] ?? 1) - 1
        counts[platform] = left > 0 ? left : nil
    }

    /// The leases that end before `deadline`, moved to `until`; returns their ids and old ends.
    mutating func extendLeases(endingBefore deadline: Date, to until: Date) -> [String: Date] {
        var extended: [String: Date] = [:]
        for index in items.indices where items[index].leasedUntil < deadline {
            extended[items[index].entry.id] = items[index].leasedUntil
            items[index].leasedUntil = until
        }
        return extended
    }

    /// Puts back the lease ends of a renewal the store did not take.
    mutating func restoreLeases(_ ends: [String: Date], ifStill until: Date) {
        for index in items.indices {
            if let end = ends[items[index].entry.id], items[index].leasedUntil == until { items[index].leasedUntil = end }
        }
    }

    private static func isOlder(_ entry: OutboxEntry, than other: OutboxEntry) -> Bool {
        entry.createdAt < other.createdAt
    }
}
