import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import NIOWebSocket
import RelayCore
import Synchronization

/// The fake Mattermost's websocket connections: the authentication challenge, `hello`, and
/// the events a test broadcasts, each connection with its own `seq` (0 for `hello`).
final class FakeMattermostSockets: Sendable {
    /// The log key of a connection that passed the challenge (its frame, token blanked).
    static let authenticated = "websocket authenticated"
    /// The log key of a challenge refused.
    static let refused = "websocket refused"

    private struct Connection {
        var outbound: WebSocketOutboundWriter
        var user: String?
        var seq = 0
    }

    private let connections = Mutex<[Int: Connection]>([:])
    private let serial = Atomic<Int>(0)

    /// Reads one connection's frames until it closes.
    func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, state: FakeMattermostLocked, log: RequestLog<RecordedRequest>) async {
        let id = serial.wrappingAdd(1, ordering: .relaxed).oldValue
        connections.withLock { $0[id] = Connection(outbound: outbound) }
        defer { _ = connections.withLock { $0.removeValue(forKey: id) } }
        do {
            for try await message in inbound.messages(maxSize: 1 << 20) {
                guard case .text(let text) = message, let frame = JSONValue.parse(Array(text.utf8)) else { continue }
                let seq = frame["seq"]?.intValue ?? 0
                switch frame["action"]?.stringValue {
                case "authentication_challenge":
                    let token = frame["data"]?["token"]?.stringValue
                    let user = state.withLock { $0.user(bearer: token.map { "Bearer " + $0 }) }
                    var recorded = RecordedRequest(
                        method: "WS", path: "/api/v4/websocket", headers: [:], body: ["seq": .int(seq), "action": "authentication_challenge"], rawBody: "")
                    guard let user else {
                        log.append(recorded, key: Self.refused)
                        try await write(
                            [
                                "status": "FAIL", "seq_reply": .int(seq),
                                "error": [
                                    "id": "api.web_socket_router.not_authenticated.app_error", "message": "Invalid or expired session, please login again.",
                                    "status_code": 401,
                                ],
                            ],
                            to: outbound)
                        continue
                    }
                    try await write(["status": "OK", "seq_reply": .int(seq)], to: outbound)
                    try await write(
                        [
                            "event": "hello", "data": ["server_version": "9.11.0.fake", "connection_id": .string("conn\(id)")],
                            "broadcast": ["omit_users": nil, "user_id": .string(user), "channel_id": "", "team_id": ""], "seq": 0,
                        ], to: outbound)
                    connections.withLock { $0[id]?.user = user }
                    recorded.headers["user"] = user
                    log.append(recorded, key: Self.authenticated)
                case .some:
                    try await write(["status": "OK", "seq_reply": .int(seq)], to: outbound)
                case nil:
                    continue
                }
            }
        } catch {
            // A dropped connection ends the stream with an error.
        }
    }

    /// Sends `event` to every authenticated connection, each with its next `seq`.
    func broadcast(_ event: String, data: JSONValue, channel: String) async throws {
        let targets = connections.withLock { connections -> [(WebSocketOutboundWriter, Int)] in
            var targets: [(WebSocketOutboundWriter, Int)] = []
            for (id, connection) in connections where connection.user != nil {
                connections[id]?.seq += 1
                targets.append((connection.outbound, connection.seq + 1))
            }
            return targets
        }
        for (outbound, seq) in targets {
            let frame: JSONValue = [
                "event": .string(event), "data": data, "broadcast": ["omit_users": nil, "user_id": "", "channel_id": .string(channel), "team_id": ""],
                "seq": .int(seq),
            ]
            try await write(frame, to: outbound)
        }
    }

    /// How many connections passed the challenge and are open.
    var authenticatedCount: Int { connections.withLock { $0.values.filter { $0.user != nil }.count } }

    func closeAll() async {
        let open = connections.withLock { $0.values.map(\.outbound) }
        for outbound in open { try? await outbound.close(.goingAway, reason: nil) }
    }

    private func write(_ frame: JSONValue, to outbound: WebSocketOutboundWriter) async throws {
        try await outbound.write(.text(String(decoding: frame.encoded(), as: UTF8.self)))
    }
}

/// The websocket router's context.
struct FakeMattermostSocketContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<FakeMattermostSocketContext>

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
    }
}
