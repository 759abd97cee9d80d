import Logging
import RelayPlatform
import Synchronization

/// Which rooms are end-to-end encrypted, as far as the bot knows: learnt from the sync (a room's
/// `m.room.encryption` state, an encrypted event) and, for a room the sync has not said anything
/// about since this process started, asked once. The bot does not answer in such rooms, even a
/// client that sends a command unencrypted: its answer would go out unencrypted, which is not what
/// the room's members chose.
final class MatrixEncryptedRooms: Sendable {
    let api: any MatrixAPI
    let logger: Logger
    private let known = Mutex<[String: Bool]>([:])

    init(api: any MatrixAPI, logger: Logger) {
        self.api = api
        self.logger = logger
    }

    func markEncrypted(_ room: String) {
        known.withLock { $0[room] = true }
    }

    /// Whether `room` is encrypted; when the homeserver cannot say, not (and asked again next time).
    func isEncrypted(_ room: String) async -> Bool {
        if let known = known.withLock({ $0[room] }) { return known }
        do throws(MatrixAPIError) {
            let encrypted = try await api.isEncrypted(room: room)
            known.withLock { $0[room] = encrypted }
            return encrypted
        } catch {
            logger.notice("matrix: could not tell whether a room is encrypted", metadata: ["reason": "\(error.reason)"])
            return false
        }
    }
}
