public import RelayCore
import RelayPipeline

public import struct Foundation.Date

extension MemoryStore {
    /// Records a consensus; returns its id.
    @discardableResult
    public func recordConsensus(_ entry: LedgerEntry) throws -> Int64 {
        try withOpenContents { contents throws(StoreError) in Self.insert(entry, into: &contents) }
    }

    /// Adds an entry under the next id; returns it.
    static func insert(_ entry: LedgerEntry, into contents: inout Contents) -> Int64 {
        var entry = entry.storable
        entry.createdAt = entry.createdAt.asKeptBySQLite
        if let markedAt = entry.mark?.markedAt { entry.mark?.markedAt = markedAt.asKeptBySQLite }
        entry.id = contents.nextLedgerID
        contents.nextLedgerID += 1
        contents.ledger[entry.id] = entry
        return entry.id
    }

    public func ledgerEntry(team: String, id: Int64) throws -> LedgerEntry? {
        try withOpenContents { contents throws(StoreError) in
            contents.ledger[id].flatMap { ExactText($0.team) == ExactText(team) ? $0 : nil }
        }
    }

    public func searchLedger(team: String, words: [String], limit: Int) throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        return try withOpenContents { contents throws(StoreError) in
            Self.newestFirst(
                contents.ledger.values.filter { entry in
                    ExactText(entry.team) == ExactText(team) && (words.isEmpty || LedgerSearchQuery.matches(entry.claim, words: words))
                }
            ).prefix(limit).map { $0 }
        }
    }

    public func markedLedger(team: String, limit: Int) throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        return try withOpenContents { contents throws(StoreError) in
            Self.newestFirst(contents.ledger.values.filter { ExactText($0.team) == ExactText(team) && $0.mark != nil }).prefix(limit).map { $0 }
        }
    }

    public func ledgerEntries(team: String) throws -> [LedgerEntry] {
        try withOpenContents { contents throws(StoreError) in
            Self.newestFirst(contents.ledger.values.filter { ExactText($0.team) == ExactText(team) }).reversed()
        }
    }

    public func markLedger(team: String, id: Int64, mark: LedgerMark) throws -> Bool {
        try withOpenContents { contents throws(StoreError) in Self.markLedger(team: team, id: id, mark: mark, in: &contents) }
    }

    static func markLedger(team: String, id: Int64, mark: LedgerMark, in contents: inout Contents) -> Bool {
        var mark = mark
        mark.markedAt = mark.markedAt.asKeptBySQLite
        guard let entry = contents.ledger[id], ExactText(entry.team) == ExactText(team) else { return false }
        contents.ledger[id]?.mark = mark
        return true
    }

    public func recentLedger(limit: Int) throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        return try withOpenContents { contents throws(StoreError) in
            Array(Self.newestFirst(Array(contents.ledger.values)).prefix(limit))
        }
    }

    public func ledgerStamps(limit: Int) throws -> [LedgerStamp] {
        try recentLedger(limit: limit).map(LedgerStamp.init)
    }

    public func clearLedger(team: String, user: String) throws -> Int {
        try withOpenContents { contents throws(StoreError) in Self.clearLedger(team: team, user: user, in: &contents) }
    }

    static func clearLedger(team: String, user: String, in contents: inout Contents) -> Int {
        let asked = contents.ledger.filter { ExactText($0.value.team) == ExactText(team) && ExactText($0.value.user) == ExactText(user) }
        for id in asked.keys { contents.ledger[id] = nil }
        return asked.count
    }

    public func purgeLedger(before: Date, defaultRetention: Retention) throws -> Int {
        let before = before.asKeptBySQLite
        return try withOpenContents { contents throws(StoreError) in
            let settings = contents.settings
            var deleted = 0
            for (id, entry) in contents.ledger {
                let retention = Self.retention(
                    team: entry.team, user: entry.user, channel: entry.channel, settings: settings, defaultRetention: defaultRetention)
                if entry.createdAt < before || retention == .off {
                    contents.ledger[id] = nil
                    deleted += 1
                } else if retention == .metadata {
                    contents.ledger[id] = entry.withoutTexts
                }
            }
            return deleted
        }
    }

    /// Newest first; entries recorded at the same time, the later recorded first (as SQLite's
    /// `ORDER BY created_at DESC, id DESC`).
    private static func newestFirst(_ entries: [LedgerEntry]) -> [LedgerEntry] {
        entries.sorted { $0.createdAt == $1.createdAt ? $0.id > $1.id : $0.createdAt > $1.createdAt }
    }
}
