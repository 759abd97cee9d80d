import Crypto

/// The API keys file (`api.keysFile`): one `sha256:<64 hex digits>` per line, `#` starts a
/// comment, blank lines are ignored. Only digests are stored, so the file (and a backup of it)
/// does not hand out working keys.
public enum APIKeyFile {
    /// The digests in `text`; a malformed line is an error naming its number and what is expected.
    public static func digests(in text: String, path: String) throws(APIKeyFileError) -> Set<String> {
        var digests: Set<String> = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let entry = line.trimmingCharacters(in: " \t\r")
            guard !entry.isEmpty else { continue }
            guard entry.hasPrefix("sha256:") else {
                throw APIKeyFileError(
                    "\(path), line \(index + 1): expected `sha256:<64 hex digits>` (the digest of a key, never the key itself; `rhea-relay api-key new` prints one)."
                )
            }
            let hex = entry.dropFirst("sha256:".count).lowercased()
            guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                throw APIKeyFileError("\(path), line \(index + 1): the digest after `sha256:` must be 64 hex digits, got \(hex.utf8.count) characters.")
            }
            digests.insert(hex)
        }
        return digests
    }

    /// The line that accepts `key`.
    public static func line(for key: String) -> String {
        "sha256:" + digest(of: key)
    }

    /// The lowercase hex SHA-256 of a key as presented.
    public static func digest(of key: String) -> String {
        SHA256.hash(data: Array(key.utf8)).hexString
    }

    /// A fresh key: `rk_` and 32 random bytes in hex (256 bits from the system's generator).
    public static func newKey() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return "rk_" + bytes.hexString
    }
}

public struct APIKeyFileError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension Sequence<UInt8> {
    var hexString: String {
        var out = ""
        for byte in self {
            out.append(Character(Unicode.Scalar(Self.hexDigits[Int(byte >> 4)])))
            out.append(Character(Unicode.Scalar(Self.hexDigits[Int(byte & 0xF)])))
        }
        return out
    }

    private static var hexDigits: [UInt8] { Array("0123456789abcdef".utf8) }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        let drop = Set(set)
        var slice = Substring(self)
        while let first = slice.first, drop.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, drop.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
