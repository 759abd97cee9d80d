import Foundation
import NIOCore
import SQLiteNIO
import VaporCSQLite

import struct Foundation.Date

/// SQLite copies bound text and blobs (the C macro does not import into Swift).
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection, used synchronously: statements are prepared once and kept by their SQL
/// text, rows are copied out as they are stepped.
///
/// sqlite-nio's connection prepares every statement again and hops to a thread pool, and then to
/// an event loop per row, for each query; profiled under load, that was a third of the relay's
/// CPU. Here the store's writer calls SQLite directly, a whole batch of operations at a time (see
/// ``GroupCommitWriter``). The C library is sqlite-nio's own build of SQLite.
///
/// Not thread-safe by itself: one caller at a time (the writer's drain, or the setup before it).
final class Database: @unchecked Sendable {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    static let maxCachedStatements = 200

    /// Opens (creating) the file; `SQLITE_OPEN_NOMUTEX`: the writer serialises all use.
    init(path: String) throws(SQLiteFailure) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK else {
            let failure = SQLiteFailure(code: status, handle: handle)
            sqlite_nio_sqlite3_close_v2(handle)
            throw failure
        }
        self.handle = handle
    }

    deinit { close() }

    var isOpen: Bool { handle != nil }

    /// The raw handle, for hooks.
    var rawHandle: OpaquePointer? { handle }

    /// Rows inserted, updated or deleted on this connection since it opened.
    var totalChanges: Int64 { sqlite_nio_sqlite3_total_changes64(handle) }

    /// Runs one statement with `binds` and returns its rows. The statement is prepared the first
    /// time its text is seen and reused after.
    @discardableResult
    func query(_ sql: String, _ binds: [SQLiteData] = []) throws(SQLiteFailure) -> [SQLRow] {
        let statement = try prepared(sql)
        defer {
            sqlite_nio_sqlite3_reset(statement)
            sqlite_nio_sqlite3_clear_bindings(statement)
        }
        try bind(binds, to: statement)
        let count = sqlite_nio_sqlite3_column_count(statement)
        var names: [String] = []
        var rows: [SQLRow] = []
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw SQLiteFailure(code: status, handle: handle) }
            if names.isEmpty && count > 0 {
                names = (0..<count).map { String(cString: sqlite_nio_sqlite3_column_name(statement, $0)) }
            }
            rows.append(SQLRow(names: names, values: (0..<count).map { column(statement, $0) }))
        }
    }

    /// Runs `sql` once per slice of `values`, with `{list}` replaced by that many `?` — for
    /// `IN (…)` lists, since SQLite caps the values bound in one statement — and returns all rows.
    /// `leading` binds come before each slice's values.
    @discardableResult
    func query(inList sql: String, leading: [SQLiteData] = [], _ values: [SQLiteData]) throws(SQLiteFailure) -> [SQLRow] {
        let slice = 500
        var rows: [SQLRow] = []
        for start in stride(from: 0, to: values.count, by: slice) {
            let chunk = values[start..<min(start + slice, values.count)]
            let list = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            rows += try query(sql.replacingOccurrences(of: "{list}", with: list), leading + chunk)
        }
        return rows
    }

    /// Runs SQL text that may hold several statements and binds nothing (pragmas, schema,
    /// transaction control), without caching it.
    func execute(_ sql: String) throws(SQLiteFailure) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite_nio_sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) }
            sqlite_nio_sqlite3_free(message)
            throw SQLiteFailure(code: status, message: text ?? String(cString: sqlite_nio_sqlite3_errstr(status)))
        }
    }

    /// Whether the connection is inside a transaction (SQLite rolls back on some errors by itself).
    var inTransaction: Bool { handle.map { sqlite_nio_sqlite3_get_autocommit($0) == 0 } ?? false }

    /// Stops reporting WAL growth (before whoever listened goes away).
    func clearWALHook() {
        sqlite_nio_sqlite3_wal_hook(handle, nil, nil)
    }

    /// Finalizes every statement and closes the connection; later calls fail.
    func close() {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
        statements.removeAll()
        if let handle { sqlite_nio_sqlite3_close_v2(handle) }
        handle = nil
    }

    private func prepared(_ sql: String) throws(SQLiteFailure) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        guard let handle else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "the database is closed") }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw SQLiteFailure(code: status, handle: handle) }
        // Bounded: `IN (…)` lists of every length are statements of their own.
        if statements.count >= Self.maxCachedStatements {
            for cached in statements.values { sqlite_nio_sqlite3_finalize(cached) }
            statements.removeAll()
        }
        statements[sql] = statement
        return statement
    }

    private func bind(_ binds: [SQLiteData], to statement: OpaquePointer) throws(SQLiteFailure) {
        for (offset, value) in binds.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .integer(let integer): status = sqlite_nio_sqlite3_bind_int64(statement, index, Int64(integer))
            case .float(let double): status = sqlite_nio_sqlite3_bind_double(statement, index, double)
            case .text(let text):
                var text = text
                status = text.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) {
                        sqlite_nio_sqlite3_bind_text64(statement, index, $0.baseAddress, UInt64($0.count), SQLITE_TRANSIENT, UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let buffer):
                status = buffer.withUnsafeReadableBytes {
                    sqlite_nio_sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64($0.count), SQLITE_TRANSIENT)
                }
            case .null: status = sqlite_nio_sqlite3_bind_null(statement, index)
            }
            guard status == SQLITE_OK else { throw SQLiteFailure(code: status, handle: handle) }
        }
    }

    private func column(_ statement: OpaquePointer, _ index: Int32) -> SQLiteData {
        switch sqlite_nio_sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(SQLiteInt64(sqlite_nio_sqlite3_column_int64(statement, index)))
        case SQLITE_FLOAT: return .float(sqlite_nio_sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite_nio_sqlite3_column_text(statement, index) else { return .text("") }
            let length = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
        case SQLITE_BLOB:
            let length = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
            guard let bytes = sqlite_nio_sqlite3_column_blob(statement, index), length > 0 else { return .blob(ByteBuffer()) }
            return .blob(ByteBuffer(bytes: UnsafeRawBufferPointer(start: bytes, count: length)))
        default: return .null
        }
    }
}

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
