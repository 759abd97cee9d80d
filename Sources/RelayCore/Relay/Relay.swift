public import struct Foundation.Date

/// The platform-neutral pipeline: dedupe, parse, run, record, reply.
///
/// Adapters turn their platform's payloads into `Event`s, call `handle`, and render the `Reply`.
public struct Relay: Sendable {
    public let tribunal: any Tribunal
    public let store: any Store
    public let configuration: RelayConfiguration
    let now: @Sendable () -> Date

    public init(tribunal: any Tribunal, store: any Store, configuration: RelayConfiguration = RelayConfiguration(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.tribunal = tribunal
        self.store = store
        self.configuration = configuration
        self.now = now
    }

    /// Handles one event. Returns nil when the event is a platform retry of one already handled.
    /// `progress` receives "Running… 2/5" updates while a chain runs.
    public func handle(_ event: Event, progress: @escaping @Sendable (RunProgress) async -> Void = { _ in }) async -> Reply? {
        do {
            if let key = event.eventKey {
                let now = now()
                let fresh = try await store.claimEvent(key: "\(event.platform):\(key)", expiresAt: now.addingTimeInterval(configuration.dedupeLifetime), now: now)
                if !fresh { return nil }
            }
            let customs = try await store.customCommands(team: event.team)
            let command: Command
            do throws(CommandError) {
                command = try CommandParser(customCommands: Set(customs.map(\.name))).parse(event.text)
            } catch {
                return .error(error.message)
            }
            let context = try await RequestContext(event: event, command: command, relay: self, customs: customs)
            return try await execute(context, progress: progress)
        } catch let error as RelayFailure {
            return .error(error.message)
        } catch {
            return .error("The relay could not read or write its database (\(error)). Try again; if it keeps failing, ask an admin to check the store.")
        }
    }

    private func execute(_ request: RequestContext, progress: @escaping @Sendable (RunProgress) async -> Void) async throws -> Reply {
        switch request.command.kind {
        case .translate, .action, .tribunal, .custom:
            return try await runModelCommand(request)
        case .chain(let sub):
            return try await chainCommand(sub, request, progress: progress)
        case .command(let sub):
            return try await customCommandAdmin(sub, request)
        case .settings(let sub):
            return try await settingsCommand(sub, request)
        case .history:
            return try await historyCommand(request)
        case .help(let topic):
            return help(topic, customs: request.customs)
        }
    }

    /// Writes a finished run to history, as the effective retention allows.
    func record(_ request: RequestContext, command: String, reply: Reply, consensus: ConsensusResult? = nil, elapsed: Double) async throws {
        let retention = request.retention
        guard retention != .off else { return }
        let keepText = retention == .full
        let entry = HistoryEntry(
            team: request.event.team, user: request.event.user, channel: request.event.channel, command: command,
            commandLine: keepText ? request.event.text : nil, resultText: keepText ? reply.body : nil,
            succeeded: reply.kind != .error, agreement: consensus?.agreement, modelsAnswered: consensus?.answered,
            modelsAsked: consensus?.asked, elapsed: elapsed, createdAt: now())
        try await store.recordRun(entry)
    }
}

/// A refusal with a message for the user (permissions, limits, missing things).
struct RelayFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// One event being handled: the parsed command and the caller's effective settings.
struct RequestContext: Sendable {
    var event: Event
    var command: Command
    var customs: [CustomCommand]
    var userSettings: Settings
    var channelSettings: Settings
    var tier: Tier
    var k: Int
    var language: Language
    var retention: Retention

    init(event: Event, command: Command, relay: Relay, customs: [CustomCommand]) async throws {
        self.event = event
        self.command = command
        self.customs = customs
        userSettings = try await relay.store.settings(.user(team: event.team, user: event.user))
        channelSettings = try await relay.store.settings(.channel(team: event.team, channel: event.channel))
        let defaults = relay.configuration
        tier = command.options.tier ?? userSettings.tier ?? channelSettings.tier ?? defaults.defaultTier
        k = command.options.k ?? defaults.defaultK
        let code = userSettings.lang ?? channelSettings.lang
        language = code.flatMap(Language.lookup) ?? defaults.defaultLanguage
        // Privacy wins: the strictest of the user's, the channel's and the default retention.
        retention = [userSettings.retention, channelSettings.retention].compactMap { $0 }
            .reduce(defaults.defaultRetention) { $0.stricter($1) }
    }

    var isPrivate: Bool { command.options.isPrivate }

    func canChange(creator: String) -> Bool {
        creator == event.user || event.isAdmin
    }
}
