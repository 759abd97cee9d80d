import SQLiteNIO

extension StoreError {
    /// A short, plain-language reason for a low-level failure, keeping SQLite's own words in
    /// parentheses for whoever debugs it.
    static func reason(for error: any Error) -> String {
        guard let error = error as? SQLiteError else { return String(describing: error) }
        let plain: String? =
            switch error.reason {
            case .cantOpen, .cantOpenDirectory, .cantOpenInvalidPath, .permission, .auth, .authUnauthorizedUser:
                "permission denied, or the path is a folder"
            case .readOnly, .readonlyDirectory, .readonlyCantLock, .readonlyInRecovery, .readonlyInRollback,
                .readonlyBackingMoved:
                "the file or its folder is read-only"
            case .notADatabase:
                "the file is not an SQLite database"
            case .corrupt, .corruptIndex, .corruptSequenceSchema, .corruptVirtualTable:
                "the file is corrupt"
            case .busy, .busyTimeout, .busyInRecovery, .busyInSnapshot, .locked:
                "the database stayed locked by another process"
            case .full:
                "the disk is full"
            default:
                nil
            }
        guard let plain else { return error.message }
        return "\(plain) (SQLite: \(error.message))"
    }
}
