import Crypto
import Foundation

/// Seals what must wait in the outbox but is itself a credential — a Slack `response_url` lets
/// anyone who holds it post into the channel — so it never sits in the database in plain text.
///
/// AES-GCM with a key derived (HKDF-SHA256) from the Slack credentials, which every restart has
/// again. If those credentials change, older sealed values no longer open, and the sender falls
/// back to the bot token.
public struct SlackSecretBox: Sendable {
    private let key: SymmetricKey

    public init(secret: String) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(secret.utf8)), info: Data("rhea-relay slack outbox v1".utf8),
            outputByteCount: 32)
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
