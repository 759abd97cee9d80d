import Foundation
import Hummingbird
public import Logging
import NIOCore

/// A server on 127.0.0.1 the relay must never call: an "internal admin API" an attacker names as
/// a callback URL (a slash command's `response_url`). It answers every request `200 {"ok":true}`
/// and records it, so a test asserts on `requests` being empty — what the attacker would see.
/// `url(_:path:trustedHost:)` spells its address the ways an attacker would.
public final class DecoyServer: Sendable {
    /// `http://127.0.0.1:<port>`.
    public let url: String
    public let port: Int
    private let log: RequestLog<RecordedRequest>
    private let server: FakeServerHandle

    private init(port: Int, log: RequestLog<RecordedRequest>, server: FakeServerHandle) {
        self.port = port
        self.url = "http://127.0.0.1:\(port)"
        self.log = log
        self.server = server
    }

    /// Starts a decoy; returns once it accepts connections.
    public static func start(logger: Logger? = nil) async throws -> DecoyServer {
        let log = RequestLog<RecordedRequest>()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            log.append(try await RecordedRequest.read(request), key: "any")
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: #"{"ok":true}"#)))
        }
        let (server, port) = try await FakeServerHandle.start(
            responder: responder, stopFlag: FakeStopFlag(),
            logger: logger ?? Logger(label: "DecoyServer", factory: { _ in SwiftLogNoOpLogHandler() }))
        return DecoyServer(port: port, log: log, server: server)
    }

    public func stop() async { await server.stop() }

    /// Every request it received, in order.
    public var requests: [RecordedRequest] { log.all }

    /// How an attacker spells the decoy's address to get past a naive check.
    public enum Spelling: String, Sendable, CaseIterable {
        /// `http://127.0.0.1:<port>`.
        case loopbackIP
        /// `http://2130706433:<port>`: 127.0.0.1 as one decimal number, which the system's
        /// resolver (`inet_aton`) reads as 127.0.0.1.
        case decimalIP
        /// `http://0x7f000001:<port>`: the same in hex.
        case hexIP
        /// `http://<trusted host>@127.0.0.1:<port>`: user info that names the trusted host.
        case userInfo
    }

    /// `path` (with any query) on the decoy, spelt `spelling`; `trustedHost` is what user info names.
    public func url(_ spelling: Spelling, path: String, trustedHost: String) -> String {
        switch spelling {
        case .loopbackIP: "http://127.0.0.1:\(port)\(path)"
        case .decimalIP: "http://2130706433:\(port)\(path)"
        case .hexIP: "http://0x7f000001:\(port)\(path)"
        case .userInfo: "http://\(trustedHost)@127.0.0.1:\(port)\(path)"
        }
    }
}

/// Runs `body` with a fresh decoy, stopped after.
public func withDecoyServer<T>(isolation: isolated (any Actor)? = #isolation, _ body: (DecoyServer) async throws -> T) async throws -> T {
    let decoy = try await DecoyServer.start()
    do {
        let result = try await body(decoy)
        await decoy.stop()
        return result
    } catch {
        await decoy.stop()
        throw error
    }
}
