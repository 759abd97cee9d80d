import Foundation
import Testing

@testable import RelayConsole

/// The pages label days by arithmetic, not with a date formatter (docs/console.md, "Speed"): the
/// labels are the formatter's, on every day of four centuries and either side of 1970.
@Suite("Console: day labels")
struct ConsoleDayLabelTests {
    @Test func everyDayIsLabelledAsTheFormatterLabelsIt() {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = [.withFullDate]
        var wrong: [String] = []
        // 1800-01-01 to 2200-01-01, at a second past midnight and a second before the next.
        for day in -62_091..<84_006 {
            for second in [1.0, 86_399] {
                let date = Date(timeIntervalSince1970: Double(day) * 86_400 + second)
                let label = OverviewPage.label(date)
                if label != formatter.string(from: date) { wrong.append(label) }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
        #expect(OverviewPage.label(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29")
    }
}
