public import Hummingbird
public import Logging
public import RelayCore
public import RelayHTTP
public import RelayPipeline
public import ServiceLifecycle

/// One chat platform, as `rhea-relay` composes it: the seam every platform module plugs into
/// (docs/architecture.md). A module exposes one type conforming to this; the server and the CLI are handed
/// a list of them and name none.
///
/// Its life: the configuration loader reads the platform's own section (`init(configuration:)`),
/// start-up output and `/readyz` show its `status`, and when it is on, `serve` calls `connect`
/// once and runs what comes back — HTTP routes, long-running services, the reply sender and,
/// optionally, a conversation reader. `rhea-relay register` calls `register` instead, and the
/// deploy files carry its `deployVariables`.
public protocol ChatPlatform: Sendable {
    /// The platform's name: its configuration section, its outbox entries' `platform`, its key in
    /// `/readyz` and its argument to `rhea-relay register` (`foo`).
    static var name: String { get }
    /// The environment variables that hold this platform's secrets, so configuration reads them
    /// as secrets (never printed) and only from the environment or a named file.
    static var secretVariables: [String] { get }
    /// What a deployment passes the platform from the operator: its secrets and the ids that go
    /// with them. Every file in `deploy/` that passes secrets lists each one (a test checks it).
    /// By default, `secretVariables`.
    static var deployVariables: [DeployVariable] { get }
    /// The variables that say where the platform's API is (`FOO_API_URL`): a deployment leaves
    /// them to their defaults, and a test of the deploy files points them at a closed port so
    /// nothing leaves the machine. By default none.
    static var apiURLVariables: [String] { get }
    /// What `rhea-relay register <name>` needs and does, for `register --help`: one or two
    /// sentences naming the variables and options it reads.
    static var registrationHelp: String { get }

    /// Reads the platform's section of the configuration (`foo.*`, env `FOO_*`). Throws a
    /// `ConfigurationError` naming the key and its variable when a value is malformed; a platform
    /// without credentials is not an error, it is off.
    init(configuration: ConfigValues) throws

    /// On (and how), or off with what to set to turn it on: for start-up output and `/readyz`.
    var status: PlatformStatus { get }

    /// Where the relay may answer at a URL the platform hands over in a payload (Slack's and
    /// Mattermost's `response_url`), from the configuration; `CallbackRule.nothing` for a
    /// platform that hands over none, whose answers go only to the API it is configured with.
    /// There is no default: every platform, and any added later, says what it allows. The
    /// platform checks each such URL with it when it arrives and again before calling it.
    var callbackRule: CallbackRule { get }

    /// Makes the platform's clients on the shared transport; called once, only when it is on.
    func connect(_ context: PlatformContext) throws -> any PlatformConnection

    /// Shows the platform the relay's commands, for `rhea-relay register`: text for the operator
    /// to hand the platform (an app manifest pointing at `request.publicURL`), or calls to the
    /// platform's API (a command list sent, a webhook set) on a transport of its own, shut down
    /// before it returns. Returns what was done or what to do next, as lines to print; a platform
    /// that needs nothing says so in a line.
    ///
    /// Reads only what it needs from `request` and ignores the rest. Throws a
    /// `ConfigurationError` that says what to set or pass when the request or the configuration
    /// falls short, or when the platform refuses (the CLI prints it and exits with 2).
    func register(_ request: RegistrationRequest, logger: Logger) async throws -> [String]

    /// Asks the platform whether it takes the configured credentials (`rhea-relay doctor`), on a
    /// transport of its own, shut down before it returns: who they belong to, or what it said and
    /// the fix. Nil when the platform holds no credential it can be asked about (it is off, or
    /// its only secrets are ones the platform never shows, such as a signing secret). There is
    /// no default: every platform says how its credentials are checked.
    func checkCredentials(logger: Logger) async -> CredentialCheck?
}

extension ChatPlatform {
    public static var secretVariables: [String] { [] }
    public static var deployVariables: [DeployVariable] { secretVariables.map { DeployVariable($0) } }
    public static var apiURLVariables: [String] { [] }
    public static var registrationHelp: String { "no registration needed." }
}

/// What `rhea-relay register` was asked, in options every platform shares: each reads what it
/// needs, says when one it needs is missing or malformed, and ignores the others.
public struct RegistrationRequest: Sendable, Hashable {
    /// The relay's public base URL (`--url`), where the platform should send requests:
    /// `https://relay.example.com`, unchecked.
    public var publicURL: String?
    /// One place to register in rather than everywhere (`--guild` for a Discord server,
    /// `--team` for a Mattermost team): its id, where commands show at once; nil for everywhere
    /// (a platform that cannot register everywhere says what to do instead).
    public var scope: String?
    /// The URL the platform should post updates to (`--webhook`); nil leaves how it delivers
    /// them as it is.
    public var webhookURL: String?
    /// Where to write a file the registration makes (`--out`): Teams' app package, which an
    /// admin uploads, or Google Chat's command list; nil for the platform's default (Teams writes
    /// its package under its own name here; Google Chat writes nothing: bots/google-chat has it).
    public var outputPath: String?

    public init(publicURL: String? = nil, scope: String? = nil, webhookURL: String? = nil, outputPath: String? = nil) {
        self.publicURL = publicURL
        self.scope = scope
        self.webhookURL = webhookURL
        self.outputPath = outputPath
    }
}

/// `rhea-relay register NAME`: registers the platform called `name` (in any case) among
/// `platforms`, the configured ones, and returns its lines to print. The CLI calls this
/// with its platform list; tests call it with theirs.
///
/// Throws a `ConfigurationError` when no platform is called `name` (naming those that are) and
/// whatever the platform's `register` throws.
public func registerPlatform(
    named name: String, with request: RegistrationRequest, among platforms: [any ChatPlatform], logger: Logger
) async throws -> [String] {
    guard let platform = platforms.first(where: { type(of: $0).name == name.lowercased() }) else {
        let known = platforms.map { type(of: $0).name }.joined(separator: ", ")
        throw ConfigurationError("unknown platform `\(name)`; known: \(known).")
    }
    return try await platform.register(request, logger: logger)
}

/// An environment variable a deployment passes a platform from the operator.
public struct DeployVariable: Sendable, Hashable {
    /// As the environment spells it: `FOO_TOKEN`.
    public var name: String
    /// A made-up value of the shape the platform checks at start (a token's prefix, a key that
    /// must be a curve point), which a test of the deploy files starts the relay with; nil when
    /// any non-empty word will do. Never a real credential.
    public var example: String?

    public init(_ name: String, example: String? = nil) {
        self.name = name
        self.example = example
    }
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
    /// Where connections a platform allows only once (gateway, long polling, Socket Mode) are
    /// leased among replicas (the relay's store); nil: this process always holds them.
    public var leases: (any LeaseStore)?
    /// Whether other processes share `leases` (PostgreSQL): on a store of one process a lease
    /// is never lost for want of a renewal in time (`ConnectionLease.isExclusive`).
    public var leasesShared: Bool
    /// This process among the replicas, as leases record their holder.
    public var replica: String
    /// How long connection leases last and how often they are renewed (tests shorten them).
    public var leaseTiming: ConnectionLease.Timing
    /// Where the platform's connections say that it refuses or takes the relay's credentials,
    /// for `/readyz`; by default a board of its own that nothing reads.
    public var credentials: CredentialReporter

    public init(
        transport: HTTPTransport, clock: any RelayClock, logger: Logger, relaySecret: String? = nil, leases: (any LeaseStore)? = nil,
        leasesShared: Bool = true, replica: String = "local", leaseTiming: ConnectionLease.Timing = ConnectionLease.Timing(),
        credentials: CredentialReporter? = nil
    ) {
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.relaySecret = relaySecret
        self.leases = leases
        self.leasesShared = leasesShared
        self.replica = replica
        self.leaseTiming = leaseTiming
        self.credentials = credentials ?? .detached(platform: "platform", clock: clock, logger: logger)
    }

    /// The lease of the connection called `name` (`telegram.poll`), held as this process.
    public func connectionLease(_ name: String) -> ConnectionLease {
        ConnectionLease(name: name, holder: replica, store: leases, exclusive: !leasesShared, clock: clock, timing: leaseTiming, logger: logger)
    }
}

/// Whether a platform runs, in words for people.
public struct PlatformStatus: Sendable, Hashable, CustomStringConvertible {
    /// Whether `serve` connects it.
    public var isOn: Bool
    /// "on (webhook + websocket)", "off: set FOO_TOKEN …".
    public var description: String
    /// Off, though some of its settings are given: a mistake to report (`rhea-relay doctor`).
    public var isHalfConfigured = false

    public static func on(_ detail: String) -> PlatformStatus {
        PlatformStatus(isOn: true, description: detail.isEmpty ? "on" : "on (\(detail))")
    }

    /// On, with a caveat ("on (webhook), but FOO_BOT_TOKEN is not set: …").
    public static func on(_ detail: String, but caveat: String) -> PlatformStatus {
        PlatformStatus(isOn: true, description: "on (\(detail)), but \(caveat)")
    }

    public static func off(_ reason: String) -> PlatformStatus {
        PlatformStatus(isOn: false, description: "off: \(reason)")
    }

    /// Off, saying exactly what is missing, and, when some of the platform's settings are given,
    /// that they are ("off: MATRIX_HOMESERVER_URL is set; missing: MATRIX_ACCESS_TOKEN …"),
    /// rather than asking for what is already there.
    public static func off(given: [String], missing: String) -> PlatformStatus {
        guard !given.isEmpty else { return .off("set \(missing)") }
        var status = PlatformStatus.off("\(given.joined(separator: ", ")) \(given.count == 1 ? "is" : "are") set; missing: \(missing)")
        status.isHalfConfigured = true
        return status
    }
}
