import Crypto
import Foundation

/// Seals what must wait in the outbox but is itself a credential — a reply URL, an interaction
/// token: whoever holds one can post into the conversation — so it never sits
/// in the database in plain text.
///
/// AES-GCM with a key derived (HKDF-SHA256) from the platform's credentials, which every restart
/// has again; without credentials, from a key made at start (values sealed before a restart then
/// no longer open). If the credentials change, older sealed values no longer open either, and the
/// platform's sender falls back to its bot token.
public struct OutboxSecretBox: Sendable {
    private let key: SymmetricKey

    /// - Parameters:
    ///   - secret: the credential the key is derived from; nil: a random key for this process.
    ///   - purpose: names the platform in the derivation (its `name`), so one credential
    ///     never keys two platforms' boxes alike. Never change it for a platform: what is already
    ///     sealed would no longer open.
    public init(secret: String?, purpose: String) {
        let material = secret.map { SymmetricKey(data: Data($0.utf8)) } ?? SymmetricKey(size: .bits256)
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: material, info: Data("rhea-relay \(purpose) outbox v1".utf8), outputByteCount: 32)
    }

    /// Base64 of nonce, ciphertext and tag.
    public func seal(_ text: String) -> String {
        // Sealing with a fresh random nonce cannot fail for a valid 256-bit key.
        let box = try! AES.GCM.seal(Data(text.utf8), using: key)
        return box.combined!.base64EncodedString()
    }

    /// The text, or nil when the value was not sealed with this box's key (or was altered).
    public func open(_ sealed: String) -> String? {
        guard let data = Data(base64Encoded: sealed), let box = try? AES.GCM.SealedBox(combined: data),
            let plain = try? AES.GCM.open(box, using: key)
        else { return nil }
        return String(data: plain, encoding: .utf8)
    }
}
