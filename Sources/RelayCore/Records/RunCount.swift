public import struct Foundation.Date

/// How many runs of one command a team made on one day (UTC), and whether they succeeded: a
/// point of the console's "commands per day" (counted from the history its retention keeps).
public struct RunCount: Sendable, Hashable {
    /// The day's first instant, UTC.
    public var day: Date
    public var command: String
    public var succeeded: Bool
    /// Why those runs failed (`HistoryEntry.failure`); nil for runs that succeeded and rows
    /// written before it was kept.
    public var failure: String?
    public var count: Int

    public init(day: Date, command: String, succeeded: Bool, failure: String? = nil, count: Int) {
        self.day = day
        self.command = command
        self.succeeded = succeeded
        self.failure = failure
        self.count = count
    }

    /// The UTC day `date` falls in, as its first instant (what stores group by).
    public static func day(of date: Date) -> Date {
        Date(timeIntervalSince1970: Double(dayNumber(of: date)) * 86_400)
    }

    /// The UTC day `date` falls in, numbered from 1970-01-01 (day 0).
    public static func dayNumber(of date: Date) -> Int {
        Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
    }

    /// The UTC days (numbered from 1970-01-01) that `from..<to` touches: what a store's day
    /// totals answer for it.
    public static func days(touching from: Date, _ to: Date) -> Range<Int> {
        let first = dayNumber(of: from)
        return first..<max(first, Int((to.timeIntervalSince1970 / 86_400).rounded(.up)))
    }

    /// The UTC days wholly inside `from..<to`; the rest of it (before the first, after the last)
    /// is read row by row where a total must be exact (a budget's month).
    public static func days(within from: Date, _ to: Date) -> Range<Int> {
        let first = Int((from.timeIntervalSince1970 / 86_400).rounded(.up))
        return first..<max(first, Int((to.timeIntervalSince1970 / 86_400).rounded(.down)))
    }
}

/// What one model's calls for a team cost on one day (UTC): a point of the console's "cost per
/// day by model".
public struct ModelCostDay: Sendable, Hashable {
    /// The day's first instant, UTC.
    public var day: Date
    public var model: String
    public var calls: Int
    /// US dollars, of the calls that had a price.
    public var cost: Double
    /// Calls without a price (`ModelCallRecord.cost` nil).
    public var unpriced: Int
    /// Calls whose tokens were estimated.
    public var estimated: Int

    public init(day: Date, model: String, calls: Int, cost: Double, unpriced: Int, estimated: Int) {
        self.day = day
        self.model = model
        self.calls = calls
        self.cost = cost
        self.unpriced = unpriced
        self.estimated = estimated
    }
}
