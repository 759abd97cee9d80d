import AsyncHTTPClient
import Hummingbird
import HummingbirdTesting
import NIOCore
import RelayHTTP
import Synchronization
import Testing

/// The transport against a real server on 127.0.0.1: what comes back, and how each way of
/// failing is classified.
@Suite("The outbound HTTP transport")
struct HTTPTransportTests {
    static func withServer(_ body: @escaping @Sendable (HTTPTransport, String) async throws -> Void) async throws {
        let router = Router()
        router.get("ok") { _, _ in "hello" }
        router.get("busy") { _, _ in
            Response(status: .serviceUnavailable, headers: [.retryAfter: "30"], body: .init(byteBuffer: ByteBuffer(string: "{\"error\":\"busy\"}")))
        }
        router.get("big") { _, _ in String(repeating: "x", count: 64 * 1024) }
        router.get("stall") { _, _ in
            // The head goes out at once; the body trickles and does not finish for 5 s. The
            // writes fail (and end the handler) as soon as the client hangs up.
            Response(
                status: .ok,
                body: ResponseBody { writer in
                    for _ in 0..<50 {
                        try await writer.write(ByteBuffer(string: " "))
                        try await Task.sleep(for: .milliseconds(100))
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

    static func get(_ url: String) -> HTTPClientRequest { HTTPClientRequest(url: url) }

    @Test func aSuccessComesBackWithItsBody() async throws {
        try await Self.withServer { transport, base in
            let answer = try await transport.exchange(Self.get(base + "/ok"), timeout: .seconds(10)).requireSuccess()
            #expect(answer.status == 200)
            #expect(String(decoding: answer.body, as: UTF8.self) == "hello")
        }
    }

    @Test func aFailingStatusIsAnAnswerThatRequireSuccessTurnsIntoAStatusFailure() async throws {
        try await Self.withServer { transport, base in
            let answer = try await transport.exchange(Self.get(base + "/busy"), timeout: .seconds(10))
            #expect(answer.status == 503)
            #expect(answer.retryAfter() == .seconds(30))
            #expect(throws: HTTPFailure.self) { try answer.requireSuccess() }
            do throws(HTTPFailure) {
                _ = try answer.requireSuccess()
            } catch {
                #expect(error.label == "status_503")
            }
        }
    }

    @Test func aServerThatStallsAfterItsHeadTimesOut() async throws {
        try await Self.withServer { transport, base in
            do throws(HTTPFailure) {
                _ = try await transport.exchange(Self.get(base + "/stall"), timeout: .milliseconds(300))
                Issue.record("a stalled body must not count as an answer")
            } catch {
                guard case .timedOut(let limit) = error else {
                    Issue.record("expected a timeout, got \(error)")
                    return
                }
                #expect(limit == .milliseconds(300))
            }
        }
    }

    @Test func anAnswerLargerThanTheLimitIsMalformed() async throws {
        try await Self.withServer { transport, base in
            do throws(HTTPFailure) {
                _ = try await transport.exchange(Self.get(base + "/big"), timeout: .seconds(10), maxBodyBytes: 1024)
                Issue.record("an oversized answer must be refused")
            } catch {
                guard case .malformed = error else {
                    Issue.record("expected malformed, got \(error)")
                    return
                }
            }
        }
    }

    @Test func aRefusedConnectionIsUnreachable() async throws {
        let http = HTTPTransport.makeClient()
        do throws(HTTPFailure) {
            _ = try await HTTPTransport(client: http).exchange(Self.get("http://127.0.0.1:1/x"), timeout: .seconds(10))
            Issue.record("nothing listens on port 1")
        } catch {
            guard case .unreachable(let reason) = error else {
                Issue.record("expected unreachable, got \(error)")
                return
            }
            #expect(reason == "connection refused")
        }
        try await http.shutdown()
    }

    @Test(arguments: ["ftp://127.0.0.1/x", "http:///nohost"])
    func aURLThatCannotBeRequestedIsInvalid(url: String) async throws {
        let http = HTTPTransport.makeClient()
        do throws(HTTPFailure) {
            _ = try await HTTPTransport(client: http).exchange(Self.get(url), timeout: .seconds(10))
            Issue.record("\(url) must be refused")
        } catch {
            guard case .invalidURL = error else {
                Issue.record("expected invalidURL, got \(error)")
                try await http.shutdown()
                return
            }
        }
        try await http.shutdown()
    }

    @Test func aCancelledCallerGetsCancelled() async throws {
        try await Self.withServer { transport, base in
            let call = Task { () -> HTTPFailure? in
                do throws(HTTPFailure) {
                    _ = try await transport.exchange(Self.get(base + "/stall"), timeout: .seconds(60))
                    return nil
                } catch {
                    return error
                }
            }
            call.cancel()
            let failure = await call.value
            guard case .cancelled? = failure else {
                Issue.record("expected cancelled, got \(String(describing: failure))")
                return
            }
        }
    }

    /// Requests that reached the redirect's target.
    final class Landings: Sendable {
        let count = Mutex(0)
    }

    /// No redirect is followed (issue 47, point 2): a callback URL that passed its platform's
    /// rule cannot send the relay on to another origin, nor carry a token there. The 307 comes
    /// back as the answer, and the other origin hears nothing.
    @Test func aRedirectToAnotherOriginIsAnAnswerNeverFollowed() async throws {
        let landings = Landings()
        let target = Router()
        target.get("landed") { _, _ in
            landings.count.withLock { $0 += 1 }
            return "landed"
        }
        try await Application(router: target, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { targetClient in
            let targetPort = try #require(targetClient.port)
            let router = Router()
            router.get("hooks/commands/x") { _, _ in
                Response(status: .temporaryRedirect, headers: [.location: "http://127.0.0.1:\(targetPort)/landed"])
            }
            try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { client in
                let port = try #require(client.port)
                let http = HTTPTransport.makeClient(maxConnectionsPerHost: 2)
                let request = Self.get("http://127.0.0.1:\(port)/hooks/commands/x")
                let answer: HTTPAnswer
                do {
                    answer = try await HTTPTransport(client: http).exchange(request, timeout: .seconds(10))
                } catch {
                    try await http.shutdown()
                    throw error
                }
                try await http.shutdown()
                #expect(answer.status == 307)
                #expect(landings.count.withLock { $0 } == 0)
            }
        }
    }
}
