import Foundation
import RelayTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `scripts/local-model`'s own words, as a newcomer reads them: its help, and hints that are true
/// of the options given (issue 46).
@Suite("scripts/local-model")
struct LocalModelScriptTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let script = root.appendingPathComponent("scripts/local-model").path

    @Test(arguments: ["--help", "help"])
    func helpIsTheHeaderCommentAndEndsThere(argument: String) async throws {
        let result = try await runProcess([Self.script, argument], in: NSTemporaryDirectory(), timeout: .seconds(30), step: "local-model \(argument)")
        #expect(result.status == 0, "\(result.output)")
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first?.hasPrefix("A small OpenAI-compatible model") == true, "\(result.output)")
        #expect(lines.dropLast().last?.hasPrefix("A 135M model answers quickly") == true, "\(result.output)")
        #expect(!result.output.contains("set -"), "no shell line after the comment: \(result.output)")
        #expect(!result.output.contains("#"), "\(result.output)")
    }

    /// A server already answers on the port: it is left as it is, the script says that the
    /// `--model` given is not what serves, and how to stop it — with the `--dir` given.
    @Test func aServerAlreadyAnsweringIsLeftAndTheStopHintNamesTheDirectory() async throws {
        let server = try await FakeOpenAIServer.start(model: "other-model")
        let directory = NSTemporaryDirectory() + "local-model-\(UUID().uuidString)"
        let port = try #require(server.url.split(separator: ":").last?.split(separator: "/").first)
        let result = try await runProcess(
            [Self.script, "start", "--port", String(port), "--dir", directory, "--model", "/models/big.gguf"], in: NSTemporaryDirectory(),
            timeout: .seconds(30), step: "local-model start")
        await server.stop()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasSuffix(server.url + "\n"), "the URL is the last line: \(result.output)")
        #expect(
            result.output.contains("so --model /models/big.gguf is not served (stop it first: scripts/local-model stop --dir \(directory))"),
            "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: directory), "nothing installed: \(result.output)")
    }

    /// Something takes connections on the port but does not answer (a server too busy to, or not
    /// an HTTP one): the script asks again, then says so and installs nothing over it. Before, one
    /// 2-second try decided "nothing there", and a loaded machine installed llama.cpp over a
    /// server that was only slow.
    @Test func somethingThatListensButDoesNotAnswerIsToldAndNotInstalledOver() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        try #require(bound && listen(listener, 8) == 0)
        let port = UInt16(bigEndian: address.sin_port)
        let directory = NSTemporaryDirectory() + "local-model-\(UUID().uuidString)"
        let result = try await runProcess(
            [Self.script, "start", "--port", String(port), "--dir", directory], in: NSTemporaryDirectory(), timeout: .seconds(60), step: "local-model start")
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("something listens on port \(port) but does not answer GET /v1/models"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: directory), "nothing installed: \(result.output)")
    }
}
