public import Hummingbird
public import Logging
public import RelayCore
public import RelayHTTP
public import RelayPipeline
public import ServiceLifecycle

/// One chat platform, as `rhea-relay serve` composes it: the seam every platform module plugs
/// into (DESIGN §2). A module exposes one type conforming to this; the server is handed a list
/// of them and names none.
///
/// Its life: the configuration loader reads the platform's own section (`init(configuration:)`),
/// start-up output and `/readyz` show its `status`, and when it is on, `serve` calls `connect`
/// once and runs what comes back — HTTP routes, long-running services, the reply sender and,
/// optionally, a conversation reader.
public protocol ChatPlatform: Sendable {
    /// The platform's name: its configuration section, its outbox entries' `platform`, its key in
    /// `/readyz` (`slack`).
    static var name: String { get }
    /// The environment variables that hold this platform's secrets, so configuration reads them
    /// as secrets (never printed) and only from the environment or a named file.
    static var secretVariables: [String] { get }

    /// Reads the platform's section of the configuration (`slack.*`, env `SLACK_*`). Throws a
    /// `ConfigurationError` naming the key and its variable when a value is malformed; a platform
    /// without credentials is not an error, it is off.
    init(configuration: ConfigValues) throws

    /// On (and how), or off with what to set to turn it on: for start-up output and `/readyz`.
    var status: PlatformStatus { get }

    /// Makes the platform's clients on the shared transport; called once, only when it is on.
    func connect(_ context: PlatformContext) throws -> any PlatformConnection

    /// What to hand the platform so its users see the relay's commands (a Slack app manifest,
    /// a Discord command list), with `publicURL` where the platform should send requests; nil
    /// when the platform needs none.
    func commandRegistration(publicURL: String) -> String?
}

extension ChatPlatform {
    public static var secretVariables: [String] { [] }
    public func commandRegistration(publicURL: String) -> String? { nil }
}

/// What a connected platform gives the server to run.
public protocol PlatformConnection: Sendable {
    /// Delivers this platform's outbox entries.
    var sender: any ReplySender { get }
    /// Answers the relay's questions about a conversation (admins, threads); nil when the
    /// platform cannot.
    var reader: (any ConversationReader)? { get }
    /// Adds the platform's webhook routes; what they receive goes to `inbox`.
    func addRoutes(to router: Router<BasicRequestContext>, inbox: any RelayInbox)
    /// Long-running work (websocket clients, pollers) the server runs and shuts down gracefully.
    func services(inbox: any RelayInbox) -> [any Service]
}

extension PlatformConnection {
    public var reader: (any ConversationReader)? { nil }
    public func addRoutes(to router: Router<BasicRequestContext>, inbox: any RelayInbox) {}
    public func services(inbox: any RelayInbox) -> [any Service] { [] }
}

/// What the server lends a platform when it connects it.
public struct PlatformContext: Sendable {
    /// The relay's one outbound HTTP transport (shared pool).
    public var transport: HTTPTransport
    /// The time pacing, caches and backoff read; a manual clock in tests.
    public var clock: any RelayClock
    /// Labelled with `platform`.
    public var logger: Logger
    /// A secret the relay keeps across restarts, for sealing outbox values when the platform has
    /// no credential of its own to derive a lasting key from; nil when the store keeps nothing.
    public var relaySecret: String?

    public init(transport: HTTPTransport, clock: any RelayClock, logger: Logger, relaySecret: String? = nil) {
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.relaySecret = relaySecret
    }
}

/// Whether a platform runs, in words for people.
public struct PlatformStatus: Sendable, Hashable, CustomStringConvertible {
    /// Whether `serve` connects it.
    public var isOn: Bool
    /// "on (HTTP + Socket Mode)", "off: set SLACK_SIGNING_SECRET …".
    public var description: String

    public static func on(_ detail: String) -> PlatformStatus {
        PlatformStatus(isOn: true, description: detail.isEmpty ? "on" : "on (\(detail))")
    }

    /// On, with a caveat ("on (HTTP), but SLACK_BOT_TOKEN is not set: …").
    public static func on(_ detail: String, but caveat: String) -> PlatformStatus {
        PlatformStatus(isOn: true, description: "on (\(detail)), but \(caveat)")
    }

    public static func off(_ reason: String) -> PlatformStatus {
        PlatformStatus(isOn: false, description: "off: \(reason)")
    }
}
