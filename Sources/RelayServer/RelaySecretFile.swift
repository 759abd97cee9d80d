import Foundation
import RelayPlatform

/// The relay's own lasting secret, kept in a file beside the store (`<store.path>.key`, mode 0600,
/// made at first start): the key material for what waits sealed in the outbox when a platform
/// has no credential to derive a lasting key from (Discord without its bot token). Without it,
/// a restart could not open what the process before had sealed, and those replies would be lost.
///
/// Beside the store, not in it: a copy of the database alone (a backup, a file sent for
/// support) does not open the sealed values.
enum RelaySecretFile {
    static func path(forStore storePath: String) -> String { storePath + ".key" }

    /// The secret in the file, or a new one written there (readable by this user only).
    static func loadOrCreate(path: String) throws -> String {
        if FileManager.default.fileExists(atPath: path) {
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8),
                case let secret = text.trimmingCharacters(in: .whitespacesAndNewlines), secret.utf8.count >= 32
            else {
                throw ConfigurationError(
                    "\(path) holds the relay's key for sealed outbox values but cannot be read or is too short; restore it, or delete it to make a new one (replies then waiting for Discord without a bot token are lost)."
                )
            }
            return secret
        }
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        let secret = Data(bytes).base64EncodedString()
        guard FileManager.default.createFile(atPath: path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError("Cannot write the relay's key file \(path) beside the store: check that its folder is writable.")
        }
        return secret
    }
}
