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

    /// The secret in the file, or a new one written there (mode 0600). An existing file is held
    /// to the rule of every secret file (``SecretFile``): its owner's alone.
    static func loadOrCreate(path: String) throws -> String {
        if !FileManager.default.fileExists(atPath: path) {
            var bytes = [UInt8](repeating: 0, count: 32)
            for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
            let fresh = Data(bytes).base64EncodedString()
            do {
                if try OwnerOnlyFile.create(atPath: path, contents: Array((fresh + "\n").utf8)) { return fresh }
            } catch {
                throw ConfigurationError("Cannot write the relay's key file \(path) beside the store (\(error)): check that its folder is writable.")
            }
        }
        let text = try SecretFile.read(path, subject: "The relay's key file \(path) (beside the store, for sealed outbox values)")
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard secret.utf8.count >= 32 else {
            throw ConfigurationError(
                "\(path) holds the relay's key for sealed outbox values but is too short; restore it, or delete it to make a new one (replies then waiting for Discord without a bot token are lost)."
            )
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
