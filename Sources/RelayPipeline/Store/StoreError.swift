import RelayCore

public import protocol Foundation.LocalizedError

/// Why a store (``SQLiteStore`` or ``MemoryStore``) failed, phrased for the operator who has to fix it.
///
/// Every message names what failed and what to do next, because these errors surface at
/// start-up (printed, then the process exits) or in logs, not to chat users.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The database file could not be created, opened or written.
    case cannotOpen(path: String, reason: String)
    /// The file was written by a newer rhea-relay; it is left untouched.
    case schemaTooNew(path: String, found: Int, supported: Int)
    /// A migration failed and was rolled back.
    case migrationFailed(path: String, version: Int, reason: String)
    /// The shared store (`STORE_URL`, shown with its password masked) could not be reached, or
    /// refused the credentials.
    case cannotConnect(store: String, reason: String)
    /// The shared store was migrated by a newer rhea-relay; it is left untouched.
    case databaseSchemaTooNew(store: String, found: Int, supported: Int)
    /// A run's end found its inbox item gone or leased by another process: the run was taken
    /// over after this process's lease lapsed, and nothing of it was written.
    case leaseLost(id: Int64)
    /// The store was used after `close()`.
    case closed
    /// An operation on an open store failed.
    case operationFailed(operation: String, reason: String)
    /// An outbox entry's stored content cannot be decoded: a newer rhea-relay wrote a kind of
    /// content this one does not know, or the file was edited by hand.
    case unreadableOutboxEntry(id: String, reason: String)
    /// An inbox item's stored event cannot be decoded (a newer rhea-relay wrote it, or the file
    /// was edited by hand); the item is removed and logged rather than run.
    case unreadableInboxItem(id: Int64, reason: String)

    /// The operator-facing message.
    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "Cannot open the database at \(path): \(reason). Set store.path (STORE_PATH) to a writable file."
        case .schemaTooNew(let path, let found, let supported):
            "The database at \(path) has schema version \(found), but this rhea-relay knows versions up to "
                + "\(supported). The file was left untouched: upgrade rhea-relay, or set store.path (STORE_PATH) "
                + "to another file."
        case .migrationFailed(let path, let version, let reason):
            "Migrating the database at \(path) to schema version \(version) failed: \(reason). The migration was "
                + "rolled back, so the file keeps its previous version; restore a backup or report the bug."
        case .cannotConnect(let store, let reason):
            "Cannot connect to the store at \(store) (STORE_URL): \(reason). Check that PostgreSQL runs there and "
                + "that the user, password and database in STORE_URL (or the file STORE_URL_FILE names) are right."
        case .databaseSchemaTooNew(let store, let found, let supported):
            "The database at \(store) (STORE_URL) has schema version \(found), but this rhea-relay knows versions up "
                + "to \(supported): a newer rhea-relay migrated it. Nothing was changed: run the newer rhea-relay on "
                + "every replica, or point STORE_URL at another database."
        case .leaseLost(let id):
            "The inbox item \(id) is no longer held by this process (its lease lapsed and another process took it "
                + "over); this run's result was dropped so that the command is answered once."
        case .closed:
            "The store is closed and cannot be used after close(). Open a new store."
        case .operationFailed(let operation, let reason):
            "Could not \(operation): \(reason)."
        case .unreadableOutboxEntry(let id, let reason):
            "The outbox entry \(id) cannot be read: \(reason). A newer rhea-relay may have written it; upgrade "
                + "rhea-relay, or mark the entry failed in the outbox table."
        case .unreadableInboxItem(let id, let reason):
            "The inbox item \(id) cannot be read: \(reason). A newer rhea-relay may have written it; it is "
                + "removed rather than run."
        }
    }

    /// Same as ``description``, so `localizedDescription` shows the full message.
    public var errorDescription: String? { description }
}
