import Foundation
import Hummingbird
import NIOCore
import RelayCore
import RelayTestSupport
import Synchronization

/// Google, as the bench's sink plays it for `--platform google-chat`: the certificates that sign
/// each event's token (`GOOGLE_CHAT_CERTS_URL`), the token endpoint (`GOOGLE_CHAT_TOKEN_URL`)
/// and the Chat API (`GOOGLE_CHAT_API_URL`), each command in a space of its own
/// (`spaces/bench-<number>`). Most answers come back in the event's own answer, which the client
/// records; an answer too slow for that arrives here as a message made (`POST`) or patched.
struct GoogleChatSink: Sendable {
    static let projectNumber = "271828182845"
    /// Google Chat's key, which signs the events' tokens.
    let chatKey: TestRSAKey
    /// The service account's key, for the relay's `GOOGLE_CHAT_SERVICE_ACCOUNT`.
    let accountKey: TestRSAKey

    init() throws {
        chatKey = try TestRSAKey(kid: "bench-chat-key")
        accountKey = try TestRSAKey(kid: "bench-account-key")
    }

    func certsURL(port: Int) -> String { "http://127.0.0.1:\(port)/google/certs" }
    func tokenURL(port: Int) -> String { "http://127.0.0.1:\(port)/google/token" }
    func apiURL(port: Int) -> String { "http://127.0.0.1:\(port)/google" }

    /// The relay's environment for Google Chat against the sink on `port`.
    func environment(port: Int) -> [String: String] {
        let account: JSONValue = [
            "type": "service_account", "client_email": "bench@bench.iam.gserviceaccount.com", "private_key_id": .string(accountKey.kid),
            "private_key": .string(accountKey.privateKeyPEM), "token_uri": .string(tokenURL(port: port)),
        ]
        return [
            "GOOGLE_CHAT_AUDIENCE": Self.projectNumber, "GOOGLE_CHAT_SERVICE_ACCOUNT": String(decoding: account.encoded(), as: UTF8.self),
            "GOOGLE_CHAT_CERTS_URL": certsURL(port: port), "GOOGLE_CHAT_API_URL": apiURL(port: port), "GOOGLE_CHAT_TOKEN_URL": tokenURL(port: port),
        ]
    }

    /// One token for every event, as Google Chat's are reused within their hour: signing one per
    /// request would measure the client's RSA, not the relay.
    func eventToken() -> String {
        let now = Int(Date().timeIntervalSince1970)
        return chatKey.rs256([
            "iss": "chat@system.gserviceaccount.com", "aud": .string(Self.projectNumber), "iat": .int(now - 5), "exp": .int(now + 3600),
        ])
    }

    /// Command `index` from user `user`: `@Rhea translate ja …` in its own space.
    static func event(_ index: Int, user: Int) -> JSONValue {
        let space = "spaces/bench-\(index)"
        let sender: JSONValue = ["name": .string("users/\(100_000 + user)"), "displayName": .string("User \(user)"), "type": "HUMAN"]
        return [
            "type": "MESSAGE", "space": ["name": .string(space), "type": "ROOM", "spaceType": "SPACE"], "user": sender,
            "message": [
                "name": .string("\(space)/messages/m\(index)"), "sender": sender, "thread": ["name": .string("\(space)/threads/t\(index)")],
                "text": .string("@Rhea translate ja Good morning, this is command number \(index)"),
                "argumentText": .string(" translate ja Good morning, this is command number \(index)"),
            ],
        ]
    }

    /// The routes under `/google`.
    func add(to router: Router<BasicRequestContext>, sink current: @escaping @Sendable () -> ReplySink?) {
        let certificate = chatKey.certificatePEM()
        let kid = chatKey.kid
        let made = Atomic<Int>(0)
        router.get("google/certs") { _, _ -> Response in ReplySink.json([kid: .string(certificate)]) }
        router.post("google/token") { _, _ -> Response in ReplySink.json(["access_token": "ya29.bench", "expires_in": 3599, "token_type": "Bearer"]) }
        let message: @Sendable (Request, BasicRequestContext, String?) async throws -> Response = { request, context, patched in
            let arrived = ContinuousClock.now
            let body = try await request.body.collect(upTo: 1 << 20)
            let text = String(buffer: body)
            let space = context.parameters.get("space") ?? ""
            let name = patched.map { "spaces/\(space)/messages/\($0)" } ?? "spaces/\(space)/messages/g\(made.wrappingAdd(1, ordering: .relaxed).newValue)"
            if let index = Int(space.dropFirst("bench-".count)), text.contains("command number") || text.contains("ahead of you"), let sink = current() {
                sink.arrived(index, at: arrived, busy: text.contains("ahead of you"), message: patched.map { "google-chat:\($0)" })
            }
            return ReplySink.json(["name": .string(name)])
        }
        router.post("google/v1/spaces/:space/messages") { request, context in try await message(request, context, nil) }
        router.patch("google/v1/spaces/:space/messages/:id") { request, context in try await message(request, context, context.parameters.get("id")) }
    }
}
