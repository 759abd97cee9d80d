import Foundation
import Testing

@testable import RelayConsole

/// The pages write dates by arithmetic, not with a date formatter (docs/console.md, "Speed"): as
/// the formatter writes them, on every day of four centuries and either side of 1970.
@Suite("Console: dates")
struct ConsoleDatesTests {
    @Test func everyDayIsLabelledAsTheFormatterLabelsIt() {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = [.withFullDate]
        var wrong: [String] = []
        // 1800-01-01 to 2200-01-01, at a second past midnight and a second before the next.
        for day in -62_091..<84_006 {
            for second in [1.0, 86_399] {
                let date = Date(timeIntervalSince1970: Double(day) * 86_400 + second)
                let label = ConsoleDates.day(date)
                if label != formatter.string(from: date) { wrong.append(label) }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
        #expect(ConsoleDates.day(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29")
    }

    @Test func timesAreWrittenAsTheFormatterWritesThem() {
        var wrong: [String] = []
        // Every 7 919 s (a prime, so every second of the day comes round) from 1969 to 2031.
        for seconds in stride(from: -31_536_000, to: 1_920_000_000, by: 7_919) {
            let date = Date(timeIntervalSince1970: Double(seconds) + 0.75)
            let expected = ISO8601DateFormatter.string(
                from: date, timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withFullDate, .withFullTime]
            ).replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
            if ConsoleDates.time(date) != expected { wrong.append("\(ConsoleDates.time(date)) ≠ \(expected)") }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
    }
}
