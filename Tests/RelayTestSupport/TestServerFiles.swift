import Foundation

/// The files a real server the tests start keeps in its folder (ngIRCd, Prosody): a throwaway
/// certificate, and logs set aside at each restart so a test reads them all.
enum TestServerFiles {
    /// A self-signed certificate for `names` (the first its CN), written to `key` and
    /// `certificate` in `folder`, readable by the server's own user (ngIRCd drops root).
    static func makeCertificate(in folder: String, key: String, certificate: String, names: [String], step: String) async throws {
        let made = try await runProcess(
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=\(names[0])",
                "-addext", "subjectAltName=" + names.map { "DNS:\($0)" }.joined(separator: ","),
            ], in: folder, timeout: .seconds(60), step: step)
        guard made.status == 0 else { throw ChildProcessError(step: step, reason: "exit \(made.status)", output: made.output) }
        for file in [key, certificate] { try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder + "/" + file) }
    }

    /// Moves the log at `path` aside (`<name>-<uuid>.log` beside it), for a restart's new one.
    static func setAside(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        let base = String(path.dropLast(".log".count))
        try FileManager.default.moveItem(atPath: path, toPath: "\(base)-\(UUID().uuidString).log")
    }

    /// The last `lines` lines of the log at `path`, for error messages.
    static func tail(_ path: String, lines: Int) -> String {
        let log = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }
}
