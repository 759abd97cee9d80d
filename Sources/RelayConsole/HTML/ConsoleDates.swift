import Foundation
import RelayCore

/// How the console writes dates: always UTC, worked out by arithmetic (the proleptic Gregorian
/// calendar's) rather than by a date formatter — a page labels hundreds of points, and a
/// formatter made for each took most of the overview's time (`console-bench`).
enum ConsoleDates {
    /// `YYYY-MM-DD`, the UTC day of `date`.
    static func day(_ date: Date) -> String {
        // Days to a civil date, from Howard Hinnant's `civil_from_days` (eras of 400 years).
        let shifted = RunCount.dayNumber(of: date) + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return String(format: "%04d-%02d-%02d", year, month, day)
    }

    /// `YYYY-MM-DD HH:MM:SS UTC`.
    static func time(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down)) - RunCount.dayNumber(of: date) * 86_400
        return day(date) + String(format: " %02d:%02d:%02d UTC", seconds / 3_600, seconds / 60 % 60, seconds % 60)
    }
}
