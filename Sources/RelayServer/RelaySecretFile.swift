import Crypto
import Foundation
import RelayPlatform
import RelayStore

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

    /// The secret of replicas that share a PostgreSQL store: derived from the database password
    /// in `STORE_URL`, which every replica has and the database does not hold (PostgreSQL keeps
    /// only a verifier), so any replica opens what another sealed, and a dump of the database
    /// alone does not. Changing the password makes the values sealed before unreadable: they
    /// are replies waiting for delivery, minutes at most.
    static func shared(for url: PostgresURL) throws -> String {
        guard let password = url.password, !password.isEmpty else {
            throw ConfigurationError(
                "store.url (STORE_URL) has no password: replicas derive the key that seals waiting outbox values from it, so that every replica can open what another sealed. Add the database user's password to STORE_URL."
            )
        }
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(password.utf8)), salt: Data("rhea-relay sealed outbox values".utf8),
            info: Data("\(url.user)@\(url.database)".utf8), outputByteCount: 32)
        return key.withUnsafeBytes { Data($0).base64EncodedString() }
    }
}
