import SQLiteNIO

import struct Foundation.Date

/// One result row, read by column name. Values are copied out of SQLite as the row is stepped,
/// so a row outlives its statement.
struct SQLRow: Sendable {
    /// The statement's column names, shared by its rows.
    let names: [String]
    let values: [SQLiteData]

    func column(_ name: String) -> SQLiteData? {
        guard let index = names.firstIndex(of: name) else { return nil }
        return values[index]
    }
}

/// A column that is missing or holds the wrong type: the file was changed outside rhea-relay.
struct UnexpectedColumnError: Error, CustomStringConvertible {
    let column: String
    let expected: String

    var description: String { "column \(column) is missing or not \(expected)" }
}

/// Typed column reads. Affinities convert (an integer reads as text); a NULL or missing value in
/// a required column is an error rather than a silent default.
extension SQLRow {
    func text(_ column: String) throws -> String {
        guard let value = optionalText(column) else {
            throw UnexpectedColumnError(column: column, expected: "text")
        }
        return value
    }

    func optionalText(_ column: String) -> String? {
        guard let data = self.column(column), !data.isNull else { return nil }
        return data.string
    }

    func int(_ column: String) throws -> Int {
        guard let value = optionalInt(column) else {
            throw UnexpectedColumnError(column: column, expected: "an integer")
        }
        return value
    }

    func optionalInt(_ column: String) -> Int? {
        guard let data = self.column(column), !data.isNull else { return nil }
        return data.integer.map { Int($0) }
    }

    func double(_ column: String) throws -> Double {
        guard let value = optionalDouble(column) else {
            throw UnexpectedColumnError(column: column, expected: "a number")
        }
        return value
    }

    func optionalDouble(_ column: String) -> Double? {
        guard let data = self.column(column), !data.isNull else { return nil }
        return data.double
    }

    func bool(_ column: String) throws -> Bool {
        try int(column) != 0
    }

    /// Dates are stored as REAL unix seconds.
    func date(_ column: String) throws -> Date {
        Date(timeIntervalSince1970: try double(column))
    }
}

/// Binds for nullable values and dates.
extension SQLiteData {
    static func date(_ date: Date) -> SQLiteData {
        .float(date.timeIntervalSince1970)
    }

    static func text(orNull value: String?) -> SQLiteData {
        value.map { .text($0) } ?? .null
    }

    static func integer(orNull value: Int?) -> SQLiteData {
        value.map { .integer(SQLiteInt64($0)) } ?? .null
    }

    static func float(orNull value: Double?) -> SQLiteData {
        value.map { .float($0) } ?? .null
    }
}
