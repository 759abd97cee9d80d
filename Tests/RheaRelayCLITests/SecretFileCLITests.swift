import Foundation
import RelayTestTags
import Testing

/// Issue 28, point 4, as an operator meets it: `serve` refuses a secret file others can change
/// or read (exit 2, naming the file and the fix), and what it makes itself — the SQLite store,
/// its -wal and -shm, the relay's key — is its user's alone whatever the umask.
@Suite("serve: secret files and the files it makes", .tags(.peers))
struct SecretFileCLITests {
    @Test func aWorldWritableKeysFileStopsServeNamingIt() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let keys = cli.directory.appendingPathComponent("api-keys").path
        try Data("sha256:\(String(repeating: "ab", count: 32))\n".utf8).write(to: URL(fileURLWithPath: keys))
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: keys)
        let out = try await cli.run(["serve"], environment: ["RHEA_API_ENABLED": "1", "RHEA_API_KEYS_FILE": keys, "HTTP_PORT": "0"])
        #expect(out.status == 2, "\(out.stderr)")
        #expect(out.stderr.contains("api.keysFile (RHEA_API_KEYS_FILE) names \(keys), which can be written by group or others (mode 0666)"), "\(out.stderr)")
        #expect(out.stderr.contains("chmod 600 \(keys)"), "\(out.stderr)")
    }

    @Test func aRelayKeyOthersCanReadStopsServeNamingIt() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let key = cli.directory.appendingPathComponent("relay.sqlite.key").path
        try Data((String(repeating: "k", count: 44) + "\n").utf8).write(to: URL(fileURLWithPath: key))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key)
        let out = try await cli.run(["serve"], environment: ["HTTP_PORT": "0", "TRIBUNAL_URL": "http://127.0.0.1:9"])
        #expect(out.status == 2, "\(out.stderr)")
        #expect(out.stderr.contains("The relay's key file \(key)"), "\(out.stderr)")
        #expect(out.stderr.contains("can be read by other users (mode 0644)"), "\(out.stderr)")
        #expect(out.stderr.contains("chmod 600 \(key)"), "\(out.stderr)")
    }

    /// SQLite keeps -wal and -shm only while the store is open, so their modes are read from a
    /// running `serve`.
    @Test(arguments: ["000", "022"])
    func theStoreAndTheKeyAreMade0600WhateverTheUmask(umask: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rhea-umask-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("relay.sqlite").path
        let serve = try await ServeProcess(environment: ["STORE_PATH": store, "TRIBUNAL_URL": "http://127.0.0.1:9"], directory: directory, umask: umask)
        var modes: [String: Int] = [:]
        for file in [store, store + "-wal", store + "-shm", store + ".key"] {
            modes[file] = (try? FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber)?.intValue
        }
        let said = await serve.stop()
        for file in [store, store + "-wal", store + "-shm", store + ".key"] {
            #expect(modes[file] == 0o600, "umask \(umask): \(file) is \(modes[file].map { String($0, radix: 8) } ?? "missing")\n\(said)")
        }
    }
}
