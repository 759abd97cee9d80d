public import protocol Foundation.LocalizedError

/// Why ``StoreCopy`` refused to copy; nothing is written to the target.
public enum StoreCopyError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// There is no SQLite file at the source path (a copy of nothing is a mistake, not a result).
    case sourceMissing(path: String)
    /// The target already holds rows: copying would mix two stores' data (and clash on ids).
    case targetNotEmpty(store: String, tables: [String])

    public var description: String {
        switch self {
        case .sourceMissing(let path):
            "There is no SQLite store at \(path): give the path of the relay's file (store.path, STORE_PATH) as --from sqlite:PATH."
        case .targetNotEmpty(let store, let tables):
            "The store at \(store) already holds data (in \(tables.joined(separator: ", "))); nothing was copied. Copy into an "
                + "empty database: a fresh one, or one whose tables you emptied."
        }
    }

    /// Same as ``description``, so `localizedDescription` shows the full message.
    public var errorDescription: String? { description }
}
