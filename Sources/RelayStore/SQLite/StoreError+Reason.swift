import RelayPipeline
import VaporCSQLite

extension StoreError {
    /// A short, plain-language reason for a low-level failure, keeping SQLite's own words in
    /// parentheses for whoever debugs it.
    static func reason(for error: any Error) -> String {
        guard let error = error as? SQLiteFailure else { return String(describing: error) }
        let plain: String? =
            switch error.primary {
            case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH: "permission denied, or the path is a folder"
            case SQLITE_READONLY: "the file or its folder is read-only"
            case SQLITE_NOTADB: "the file is not an SQLite database"
            case SQLITE_CORRUPT: "the file is corrupt"
            case SQLITE_BUSY, SQLITE_LOCKED: "the database stayed locked by another process"
            case SQLITE_FULL: "the disk is full"
            default: nil
            }
        guard let plain else { return error.message }
        return "\(plain) (SQLite: \(error.message))"
    }
}
