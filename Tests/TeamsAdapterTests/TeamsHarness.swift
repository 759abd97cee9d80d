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

@testable import TeamsAdapter

/// A Teams platform connected to a fake Bot Framework, its routes on a test router, and an
/// inbox that records what they submit.
struct TeamsHarness: Sendable {
    let framework: FakeBotFramework
    let connection: TeamsConnection
    let inbox: RecordingRelayInbox
    let clock: ManualClock
    let credentials: CredentialRefusals

    static func with<T: Sendable>(
        password: String = FakeBotFramework.appPassword, _ body: @Sendable (TeamsHarness, any TestClientProtocol) async throws -> T
    ) async throws -> T {
        let framework = try await FakeBotFramework.start()
        let client = HTTPTransport.makeClient(maxConnectionsPerHost: 8)
        do {
            let clock = ManualClock(now: Date())
            let logger = Logger(label: "test.teams", factory: { _ in SwiftLogNoOpLogHandler() })
            let credentials = CredentialRefusals()
            let platform = TeamsPlatform(
                configuration: TeamsConfiguration(
                    appID: FakeBotFramework.appID, appPassword: TeamsSecret(password), openIDMetadataURL: framework.openIDMetadataURL,
                    tokenURL: framework.tokenURL))
            let context = PlatformContext(
                transport: HTTPTransport(client: client), clock: clock, logger: logger,
                credentials: credentials.reporter(platform: TeamsPlatform.name, clock: clock, logger: logger))
            let connection = try #require(try platform.connect(context) as? TeamsConnection)
            let inbox = RecordingRelayInbox()
            let router = Router()
            connection.addRoutes(to: router, inbox: inbox)
            let harness = TeamsHarness(framework: framework, connection: connection, inbox: inbox, clock: clock, credentials: credentials)
            let result = try await Application(router: router).test(.router) { client in try await body(harness, client) }
            try? await client.shutdown()
            await framework.stop()
            return result
        } catch {
            try? await client.shutdown()
            await framework.stop()
            throw error
        }
    }

    /// A message activity from Alice (`FakeBotFramework.message`).
    func message(
        _ text: String, personal: Bool = false, id: String = UUID().uuidString, mentioning: Bool = true, serviceURL: String? = nil
    ) -> JSONValue {
        framework.message(text, personal: personal, id: id, mentioning: mentioning, serviceURL: serviceURL)
    }

    static let alice = FakeBotFramework.alice
    static let aliceAAD = FakeBotFramework.aliceAAD
    static let team = FakeBotFramework.team
    static let channelThread = FakeBotFramework.thread("1700000000001")
    static let personalChat = FakeBotFramework.personalChat

    /// POSTs `activity` to `/teams/messages` with `token` (by default a valid one for it).
    func post(_ activity: JSONValue, token: String?, to client: any TestClientProtocol) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: "/teams/messages", method: .post, headers: headers, body: ByteBuffer(bytes: activity.encoded()))
    }

    func post(_ activity: JSONValue, to client: any TestClientProtocol) async throws -> TestResponse {
        try await post(activity, token: framework.activityToken(now: clock.now), to: client)
    }
}
