import Foundation

/// A file holding a secret, as an operator leaves one: `mode` set exactly (the process's umask,
/// which another test may be changing, plays no part), removed by `remove()`.
public struct SecretFileFixture: Sendable {
    public let path: String

    public init(_ text: String, mode: Int = 0o600, name: String = "secret") throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
