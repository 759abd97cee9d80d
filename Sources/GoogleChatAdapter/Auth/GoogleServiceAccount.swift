import CryptoExtras
import Foundation
import JWTKit
import RelayPlatform

/// A Google service account's key, as the Cloud console downloads it (JSON: `type`
/// `service_account`, `client_email`, `private_key_id`, `private_key` as a PEM, `token_uri`).
/// Read whole at start — a key that cannot sign stops the relay there, naming the variable —
/// and never printed.
public struct GoogleServiceAccount: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public let clientEmail: String
    public let privateKeyID: String
    let privateKeyPEM: String
    public let tokenURI: String?

    /// Reads the key JSON `text`; `variable` names where it came from in the error.
    public init(json text: String, variable: String) throws {
        struct File: Decodable {
            var type: String?
            var client_email: String?
            var private_key_id: String?
            var private_key: String?
            var token_uri: String?
        }
        guard let file = try? JSONDecoder().decode(File.self, from: Data(text.utf8)) else {
            throw ConfigurationError("\(variable) must be a service account's key, the JSON file the Google Cloud console downloads.")
        }
        guard file.type == "service_account" else {
            throw ConfigurationError("\(variable) is not a service account's key (its \"type\" is not \"service_account\").")
        }
        guard let email = file.client_email, email.contains("@"), let keyID = file.private_key_id, !keyID.isEmpty, let pem = file.private_key else {
            throw ConfigurationError("\(variable) lacks client_email, private_key_id or private_key: download the key again.")
        }
        guard (try? Insecure.RSA.PrivateKey(pem: pem)) != nil else {
            throw ConfigurationError("\(variable)'s private_key is not an RSA private key in PEM: download the key again.")
        }
        self.clientEmail = email
        self.privateKeyID = keyID
        self.privateKeyPEM = pem
        // https, or http on a loopback host (a test's own endpoint).
        self.tokenURI = file.token_uri.flatMap {
            $0.hasPrefix("https://") || $0.hasPrefix("http://127.0.0.1") || $0.hasPrefix("http://localhost") ? $0 : nil
        }
    }

    public var description: String { "<google service account \(clientEmail)>" }
    public var debugDescription: String { description }

    /// A key JSON of the right shape with a key made now and thrown away: what a test of the
    /// deploy files starts the relay with, so no key, not even a made-up one, is in the repository.
    public static func madeUpExample() -> String {
        let pem = (try? _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation) ?? ""
        let fields: [String: String] = [
            "type": "service_account", "client_email": "rhea-relay@example-project.iam.gserviceaccount.com", "private_key_id": "0000example",
            "private_key": pem, "token_uri": GoogleChatConfiguration.defaultTokenURL,
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(fields)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
