import Crypto
import CryptoExtras
import Foundation

/// SASL SCRAM (RFC 5802; SHA-256 per RFC 7677), the client's side, without channel binding
/// (`n,,`): XMPP's authentication (RFC 6120 §6). The relay proves it knows the password without
/// sending it, and checks the server's signature, so a server that does not know it is refused
/// too.
///
/// Tested with the RFCs' own examples. An iteration count below 4 096 (RFC 5802's floor) or
/// above 1 000 000 (a server making the client spin) is refused.
struct SCRAMClient: Sendable {
    enum Hash: String, Sendable, CaseIterable {
        case sha1 = "SCRAM-SHA-1"
        case sha256 = "SCRAM-SHA-256"
    }

    struct Failure: Error, Hashable, CustomStringConvertible {
        var reason: String
        var description: String { "SCRAM: \(reason)" }
    }

    let hash: Hash
    let user: String
    let password: String
    let clientNonce: String

    /// What was said so far, for the proof and the server's signature.
    private var clientFirstBare = ""
    private var expectedServerSignature: [UInt8]?

    init(hash: Hash, user: String, password: String, clientNonce: String = SCRAMClient.makeNonce()) {
        self.hash = hash
        self.user = user
        self.password = password
        self.clientNonce = clientNonce
    }

    static func makeNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
    }

    /// `n,,n=user,r=nonce`: the first message.
    mutating func first() -> String {
        let name = user.replacingOccurrences(of: "=", with: "=3D").replacingOccurrences(of: ",", with: "=2C")
        clientFirstBare = "n=\(name),r=\(clientNonce)"
        return "n,," + clientFirstBare
    }

    /// The answer to the server's first message (`r=…,s=…,i=…`): `c=biws,r=…,p=…`.
    mutating func final(serverFirst: String) throws(Failure) -> String {
        let fields = Self.fields(serverFirst)
        guard let nonce = fields["r"], nonce.hasPrefix(clientNonce), nonce.count > clientNonce.count else {
            throw Failure(reason: "the server's nonce does not extend the relay's")
        }
        guard let saltText = fields["s"], let salt = Data(base64Encoded: saltText), !salt.isEmpty else { throw Failure(reason: "no salt") }
        guard let iterations = fields["i"].flatMap({ Int($0) }), (4_096...1_000_000).contains(iterations) else {
            throw Failure(reason: "an iteration count outside 4 096–1 000 000")
        }
        let withoutProof = "c=biws,r=\(nonce)"
        let authMessage = Array("\(clientFirstBare),\(serverFirst),\(withoutProof)".utf8)
        let salted: [UInt8]
        do {
            let key = try KDF.Insecure.PBKDF2.deriveKey(
                from: Array(password.precomposedStringWithCompatibilityMapping.utf8), salt: salt,
                using: hash == .sha1 ? .insecureSHA1 : .sha256, outputByteCount: hash == .sha1 ? 20 : 32, unsafeUncheckedRounds: iterations)
            salted = key.withUnsafeBytes { Array($0) }
        } catch {
            throw Failure(reason: "the key could not be derived")
        }
        let clientKey = mac(key: salted, Array("Client Key".utf8))
        let storedKey = digest(clientKey)
        let signature = mac(key: storedKey, authMessage)
        let proof = zip(clientKey, signature).map { $0 ^ $1 }
        let serverKey = mac(key: salted, Array("Server Key".utf8))
        expectedServerSignature = mac(key: serverKey, authMessage)
        return withoutProof + ",p=" + Data(proof).base64EncodedString()
    }

    /// Checks the server's last message (`v=…`): the server knew the password too.
    func verify(serverFinal: String) throws(Failure) {
        let fields = Self.fields(serverFinal)
        if let error = fields["e"] { throw Failure(reason: "the server refused: \(error)") }
        guard let expected = expectedServerSignature, let given = fields["v"].flatMap({ Data(base64Encoded: $0) }) else {
            throw Failure(reason: "no server signature")
        }
        // Compared in constant time: the signature is a secret until checked.
        guard given.count == expected.count, zip(given, expected).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else {
            throw Failure(reason: "the server's signature is wrong: it does not know the password")
        }
    }

    private func mac(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        let key = SymmetricKey(data: key)
        switch hash {
        case .sha1: return Array(HMAC<Insecure.SHA1>.authenticationCode(for: data, using: key))
        case .sha256: return Array(HMAC<SHA256>.authenticationCode(for: data, using: key))
        }
    }

    private func digest(_ data: [UInt8]) -> [UInt8] {
        switch hash {
        case .sha1: return Array(Insecure.SHA1.hash(data: data))
        case .sha256: return Array(SHA256.hash(data: data))
        }
    }

    /// `a=1,b=2` as a map (values may hold `=`).
    static func fields(_ message: String) -> [String: String] {
        var out: [String: String] = [:]
        for part in message.split(separator: ",") {
            guard let equals = part.firstIndex(of: "="), part.distance(from: part.startIndex, to: equals) == 1 else { continue }
            out[String(part[..<equals])] = String(part[part.index(after: equals)...])
        }
        return out
    }
}
