import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import RelayCore
import RelayHTTP
import RelayPipeline
import RelayPlatform
import RelayTestSupport
import Testing

@testable import GoogleChatAdapter

/// A Google Chat platform connected to a fake Google, its routes on a test router, and an inbox
/// that records what they submit.
struct GoogleChatHarness: Sendable {
    let google: FakeGoogleChat
    let connection: GoogleChatConnection
    let inbox: RecordingRelayInbox
    let clock: ManualClock
    let credentials: CredentialRefusals

    /// The endpoint URL, when the app's audience is its URL.
    static let endpointURL = "https://relay.example.com/google-chat/events"

    static func with<T: Sendable>(
        audience: String = FakeGoogleChat.projectNumber, certsURL: ((FakeGoogleChat) -> String)? = nil,
        _ body: @Sendable (GoogleChatHarness, any TestClientProtocol) async throws -> T
    ) async throws -> T {
        let google = try await FakeGoogleChat.start()
        let client = HTTPTransport.makeClient(maxConnectionsPerHost: 8)
        do {
            let clock = ManualClock(now: Date())
            let logger = Logger(label: "test.google-chat", factory: { _ in SwiftLogNoOpLogHandler() })
            let credentials = CredentialRefusals()
            let parsed = try #require(GoogleChatAudience(audience))
            let defaultCerts = if case .projectNumber = parsed { google.chatCertsURL } else { google.googleCertsURL }
            var configuration = GoogleChatConfiguration(
                audience: parsed, serviceAccount: try GoogleServiceAccount(json: google.serviceAccountJSON, variable: "test"),
                certsURL: certsURL?(google) ?? defaultCerts, apiURL: google.apiURL, tokenURL: nil)
            // Nothing delivers here: an event's request need not wait for its reply.
            configuration.eventAnswerWindow = .milliseconds(20)
            let platform = GoogleChatPlatform(configuration: configuration)
            let context = PlatformContext(
                transport: HTTPTransport(client: client), clock: clock, logger: logger,
                credentials: credentials.reporter(platform: GoogleChatPlatform.name, clock: clock, logger: logger))
            let connection = try #require(try platform.connect(context) as? GoogleChatConnection)
            let inbox = RecordingRelayInbox()
            let router = Router()
            connection.addRoutes(to: router, inbox: inbox)
            let harness = GoogleChatHarness(google: google, connection: connection, inbox: inbox, clock: clock, credentials: credentials)
            let result = try await Application(router: router).test(.router) { client in try await body(harness, client) }
            try? await client.shutdown()
            await google.stop()
            return result
        } catch {
            try? await client.shutdown()
            await google.stop()
            throw error
        }
    }

    /// POSTs `event` to `/google-chat/events` with `token` (none when nil).
    func post(_ event: JSONValue, token: String?, to client: any TestClientProtocol) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: "/google-chat/events", method: .post, headers: headers, body: ByteBuffer(bytes: event.encoded()))
    }

    /// POSTs `event` with a valid project-number token.
    func post(_ event: JSONValue, to client: any TestClientProtocol) async throws -> TestResponse {
        try await post(event, token: google.chatToken(now: clock.now), to: client)
    }

    /// The address of a command in the space's thread `thread`.
    static func address(thread: String = FakeGoogleChat.space + "/threads/t1", slot: String? = nil, direct: Bool = false) -> GoogleChatAddress {
        GoogleChatAddress(
            team: direct ? "dm:\(FakeGoogleChat.alice)" : FakeGoogleChat.space, space: direct ? FakeGoogleChat.aliceDM : FakeGoogleChat.space,
            thread: thread, user: FakeGoogleChat.alice, isDirect: direct, eventSlot: slot)
    }

    static func entry(_ content: OutboxEntry.Content, _ address: GoogleChatAddress, replaces: String? = nil, id: String = UUID().uuidString) -> OutboxEntry {
        OutboxEntry(
            id: id, platform: GoogleChatPlatform.name, conversation: address.conversationKey, address: address.route.address, content: content,
            replaces: replaces, nextAttemptAt: Date(), createdAt: Date())
    }
}
