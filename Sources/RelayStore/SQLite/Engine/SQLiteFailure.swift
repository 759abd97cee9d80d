import VaporCSQLite

/// A failed SQLite call: its extended result code and SQLite's own message.
struct SQLiteFailure: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    /// The primary result code (`SQLITE_BUSY` for `SQLITE_BUSY_TIMEOUT`…).
    var primary: Int32 { code & 0xff }

    var description: String { message }

    init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The connection's last error, or the code's generic text when there is none.
    init(code: Int32, handle: OpaquePointer?) {
        self.code = code
        let text = handle.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) }
        message = text ?? String(cString: sqlite_nio_sqlite3_errstr(code))
    }
}
