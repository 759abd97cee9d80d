import PostgresNIO

import struct Foundation.Date

/// Typed reads of a row by column name, as ``SQLRow``'s: a missing or mistyped column throws
/// ``UnexpectedColumnError``, so a row from an unexpected schema is an error, not a wrong value.
extension PostgresRandomAccessRow {
    func value<T: PostgresDecodable>(_ column: String, as type: T.Type, expected: String) throws -> T {
        guard contains(column) else { throw UnexpectedColumnError(column: column, expected: expected) }
        do {
            return try self[column].decode(T.self)
        } catch {
            throw UnexpectedColumnError(column: column, expected: expected)
        }
    }

    func text(_ column: String) throws -> String { try value(column, as: String.self, expected: "text") }
    func optionalText(_ column: String) throws -> String? { try value(column, as: String?.self, expected: "text or null") }
    func int(_ column: String) throws -> Int { try value(column, as: Int.self, expected: "an integer") }

    func optionalInt(_ column: String) throws -> Int? { try value(column, as: Int?.self, expected: "an integer or null") }
    func double(_ column: String) throws -> Double { try value(column, as: Double.self, expected: "a number") }
    func optionalDouble(_ column: String) throws -> Double? { try value(column, as: Double?.self, expected: "a number or null") }
    func bool(_ column: String) throws -> Bool { try value(column, as: Bool.self, expected: "a boolean") }
    func date(_ column: String) throws -> Date { Date(timeIntervalSince1970: try double(column)) }
}
