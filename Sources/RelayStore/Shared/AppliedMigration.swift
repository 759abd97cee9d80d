public import struct Foundation.Date

/// A schema version recorded in the database file, and when it was applied.
public struct AppliedMigration: Sendable, Hashable {
    /// The migration's version number.
    public var version: Int
    /// When this file was migrated to it.
    public var appliedAt: Date

    /// Creates a record of an applied migration.
    public init(version: Int, appliedAt: Date) {
        self.version = version
        self.appliedAt = appliedAt
    }
}
