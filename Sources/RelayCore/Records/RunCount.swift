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
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400)
    }
}
