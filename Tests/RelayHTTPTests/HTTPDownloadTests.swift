import AsyncHTTPClient
import Hummingbird
import HummingbirdTesting
import NIOCore
import RelayHTTP
import Synchronization
import Testing

/// `HTTPTransport.download`: a file is read as it arrives and cut off at the cap, whether its
/// size was announced or not.
@Suite("Capped downloads")
struct HTTPDownloadTests {
    /// The endless body's length in 1 KB chunks: 100 MB, which takes the server at least 100 s.
    static let endlessChunks = 100 * 1024
    /// How many chunks of the endless body the server managed to write.
    static let written = Atomic<Int>(0)

    static func withServer(_ body: @escaping @Sendable (HTTPTransport, String) async throws -> Void) async throws {
        let router = Router()
        router.get("small") { _, _ in String(repeating: "a", count: 1000) }
        router.get("announced") { _, _ in String(repeating: "b", count: 64 * 1024) }
        router.get("missing") { _, _ in Response(status: .notFound, body: .init(byteBuffer: ByteBuffer(string: "{\"ok\":false}"))) }
        router.get("endless") { _, _ in
            // Chunked, no length: 1 KB a millisecond for as long as the client reads.
            Response(
                status: .ok,
                body: ResponseBody { writer in
                    for _ in 0..<Self.endlessChunks {
                        try await writer.write(ByteBuffer(repeating: UInt8(ascii: "c"), count: 1024))
                        HTTPDownloadTests.written.add(1, ordering: .relaxed)
                        try await Task.sleep(for: .milliseconds(1))
                    }
                    try await writer.finish(nil)
                })
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let http = HTTPTransport.makeClient(maxConnectionsPerHost: 4)
            do {
                try await body(HTTPTransport(client: http), "http://127.0.0.1:\(port)")
            } catch {
                try await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
    }

    @Test func aFileUnderTheCapComesBackWhole() async throws {
        try await Self.withServer { transport, base in
            guard case .complete(let answer) = try await transport.download(HTTPClientRequest(url: base + "/small"), timeout: .seconds(10), maxBytes: 4096)
            else {
                Issue.record("not complete")
                return
            }
            #expect(answer.status == 200 && answer.body.count == 1000)
        }
    }

    @Test func anAnnouncedLengthOverTheCapIsRefusedAtOnce() async throws {
        try await Self.withServer { transport, base in
            let download = try await transport.download(HTTPClientRequest(url: base + "/announced"), timeout: .seconds(10), maxBytes: 4096)
            guard case .tooLarge(let declared) = download else {
                Issue.record("\(download)")
                return
            }
            #expect(declared == 64 * 1024)
        }
    }

    @Test func aBodyWithoutALengthIsCutOffAtTheCap() async throws {
        try await Self.withServer { transport, base in
            let download = try await transport.download(HTTPClientRequest(url: base + "/endless"), timeout: .seconds(30), maxBytes: 8 * 1024)
            guard case .tooLarge(nil) = download else {
                Issue.record("\(download)")
                return
            }
            // The read stopped at the cap, long before the end of the body.
            #expect(Self.written.load(ordering: .relaxed) < Self.endlessChunks)
        }
    }

    @Test func aRefusalComesBackAsAnAnswer() async throws {
        try await Self.withServer { transport, base in
            guard case .complete(let answer) = try await transport.download(HTTPClientRequest(url: base + "/missing"), timeout: .seconds(10), maxBytes: 4096)
            else {
                Issue.record("not complete")
                return
            }
            #expect(answer.status == 404)
            #expect(String(decoding: answer.body, as: UTF8.self) == "{\"ok\":false}")
        }
    }
}
