import Foundation
import Hummingbird
public import Logging
import NIOCore
import RelayCore
import RelayPipeline
public import RelayPlatform

/// A chat platform that exists only for tests: a webhook in, a recorded send out. It proves the
/// seam: it plugs into `serve` by being added to the platform list, and a command sent to its
/// webhook runs through the real server, dispatcher and outbox.
///
/// Configuration section `testhook`: `testhook.token` (env `TESTHOOK_TOKEN`, a secret) turns it
/// on; requests must carry `Authorization: Bearer <token>`. `POST /testhook/messages` takes
/// `{"id","team","channel","user","text"}` and answers 202 at once; replies are recorded in
/// `sent`, where a test awaits them with `sent.next(channel)`.
public struct WebhookTestPlatform: ChatPlatform {
    public static let name = "testhook"
    public static let secretVariables = ["TESTHOOK_TOKEN"]

    /// What the platform "posted", per channel (the outbox entry's conversation).
    public let sent: RequestLog<SentMessage>
    let token: String?

    public init(token: String?, sent: RequestLog<SentMessage> = RequestLog()) {
        self.token = token
        self.sent = sent
    }

    public init(configuration: ConfigValues) throws {
        self.init(token: try configuration.secret("testhook.token", fileKey: "testhook.tokenFile"))
    }

    /// Nothing: its messages carry no URL to answer at.
    public var callbackRule: CallbackRule { .nothing }

    public var status: PlatformStatus {
        token == nil ? .off("set TESTHOOK_TOKEN") : .on("webhook")
    }

    public func connect(_ context: PlatformContext) throws -> any PlatformConnection {
        Connection(token: token ?? "", sent: sent)
    }

    /// What to point the sender at, as a platform that is told where to post: needs its token
    /// and `--url`; `--guild` and `--webhook` are not its business.
    /// No credential to ask about: requests carry only a shared secret.
    public func checkCredentials(logger: Logger) async -> CredentialCheck? { nil }

    public func register(_ request: RegistrationRequest, logger: Logger) async throws -> [String] {
        guard token != nil else { throw ConfigurationError("register testhook needs TESTHOOK_TOKEN.") }
        guard let url = request.publicURL else { throw ConfigurationError("--url is required for testhook: the relay's public base URL.") }
        return ["POST \(url)/testhook/messages", "Authorization: Bearer $TESTHOOK_TOKEN"]
    }

    /// One delivered outbox entry, as the platform would have shown it.
    public struct SentMessage: Sendable, Hashable {
        public var channel: String
        /// The reply's text as a user would read it (title, body, notes, footer).
        public var text: String
        public var isProgress: Bool
    }

    struct Connection: PlatformConnection {
        let token: String
        let sent: RequestLog<SentMessage>

        var sender: any ReplySender { Sender(sent: sent) }

        func addRoutes(to router: Router<BasicRequestContext>, inbox: any RelayInbox) {
            router.post("testhook/messages") { request, _ -> Response in
                // Verified before anything is read, as a real platform's signature would be.
                guard request.headers[.authorization] == "Bearer \(token)" else {
                    return Response(status: .unauthorized)
                }
                var request = request
                let body = try await request.collectBody(upTo: 1 << 16)
                guard let json = JSONValue.parse(body.readableBytesView), let text = json["text"]?.stringValue,
                    let channel = json["channel"]?.stringValue, let user = json["user"]?.stringValue
                else {
                    return Response(status: .badRequest)
                }
                let event = Event(
                    platform: WebhookTestPlatform.name, team: json["team"]?.stringValue ?? "T", channel: channel, user: user,
                    text: text, eventKey: json["id"]?.stringValue)
                let submission = try await inbox.submit(event, route: ReplyRoute(platform: WebhookTestPlatform.name, conversation: channel, address: channel))
                // Busy: the answer the platform would show at once.
                if let busy = submission.busyMessage {
                    return Response(status: .serviceUnavailable, body: ResponseBody(byteBuffer: ByteBuffer(string: busy)))
                }
                return Response(status: .accepted)
            }
        }
    }

    struct Sender: ReplySender {
        let sent: RequestLog<SentMessage>
        var platform: String { WebhookTestPlatform.name }

        func minimumInterval(for entry: OutboxEntry) -> Duration { .zero }

        func deliver(_ entry: OutboxEntry, earlier: OutboxEntry?) async -> DeliveryOutcome {
            switch entry.content {
            case .reply(let reply):
                let parts = [reply.title, reply.body] + reply.notes + [reply.footer?.summary]
                sent.append(SentMessage(channel: entry.address, text: parts.compactMap { $0 }.joined(separator: "\n"), isProgress: false), key: entry.address)
            case .progress(let step):
                sent.append(SentMessage(channel: entry.address, text: step.line, isProgress: true), key: entry.address)
            case .parkedRun:
                return .rejected(reason: "a parked run is not a message")
            }
            return .sent(platformRef: entry.id)
        }
    }
}
