import Foundation
import Glibc
import RelayTestSupport
import RelayTestTags
import Testing

/// `serve` on an address it cannot listen on: one line naming the setting to change, exit 2,
/// before "serving on" and before the store is touched.
@Suite("serve: where it listens", .tags(.peers))
struct ServeListenTests {
    @Test func aPortInUseExitsTwoNamingHTTPPortBeforeServing() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let (socket, port) = try Self.listeningSocket()
        defer { close(socket) }
        let output = try await cli.run(["serve"], environment: ["HTTP_PORT": String(port)], timeout: 30)
        #expect(output.status == 2)
        #expect(output.stderr.contains("port \(port) on 127.0.0.1 is already in use (HTTP_PORT, http.port)"), "\(output.stderr)")
        #expect(!output.stderr.contains("serving on"), "\(output.stderr)")
        #expect(!output.stderr.lowercased().contains("store is closed"), "\(output.stderr)")
        // Set before anything else (docs/voice.md): glibc maps large blocks on their own and
        // unmaps them when freed, so a burst of voice notes gives its memory back.
        #expect(!output.stderr.contains("mmap threshold could not be fixed"), "\(output.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent("relay.sqlite").path), "the store was not opened")
    }

    @Test(arguments: [
        ("192.0.2.1", "is 192.0.2.1, which is not an address of this machine"),
        ("no-such-host.invalid", "is no-such-host.invalid, which cannot be resolved to an address"),
    ])
    func aHostThatIsNotThisMachinesExitsTwoNamingHTTPHost(host: String, says: String) async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        // A held loopback port: the bind fails for the host's sake, never for the port's.
        let output = try await withRefusingLoopbackPort { port in
            try await cli.run(["serve"], environment: ["HTTP_HOST": host, "HTTP_PORT": String(port)], timeout: 30)
        }
        #expect(output.status == 2)
        #expect(output.stderr.contains("HTTP_HOST (http.host) \(says)"), "\(output.stderr)")
        #expect(!output.stderr.contains("serving on"), "\(output.stderr)")
    }

    /// A socket listening on a loopback port the system chose, and the port.
    static func listeningSocket() throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard fd >= 0, bound == 0, listen(fd, 4) == 0 else { throw CocoaError(.fileWriteUnknown) }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
