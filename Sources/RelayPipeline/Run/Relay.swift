public import RelayCore
import Synchronization

import struct Foundation.Date
import struct Foundation.UUID

/// The platform-neutral pipeline: dedupe, parse, run, record, reply.
///
/// Adapters turn their platform's payloads into `Event`s, call `handle`, and render the `Reply`.
public struct Relay: Sendable {
    /// The backend; during a run, the same wrapped so its failures are reported.
    public private(set) var tribunal: any Tribunal
    public let store: any Store
    public let configuration: RelayConfiguration
    let clock: any RelayClock
    /// Per platform, what the relay may ask about a conversation when a command needs it.
    let readers: [String: any ConversationReader]
    /// Who administers a team, for the commands only admins may run.
    let roles: TeamRoles
    /// How a failure reaches the reply (an error id, or the details) and the log.
    public private(set) var failures: FailureReporting
    /// Speech to text for voice notes; nil when `transcription.baseURL` is not set, and then a
    /// command that needs a voice note's words says how to set it up.
    public let transcriber: (any Transcriber)?
    /// The audio voice notes being heard hold at once (`TranscriptionLimits.memoryBudget`),
    /// shared by every copy of this relay.
    let voiceMemory: ByteBudget?
    /// Makes `/admin console`'s sign-in links; nil while the console is off (docs/console.md).
    public var console: (any ConsoleLinkMaker)?

    /// - Parameter failures: chat platforms get error ids in replies and the details in the log
    ///   (the default logs nowhere: `serve` passes its logger); the terminal asks for `.operator`.
    public init(
        tribunal: any Tribunal, store: any Store, configuration: RelayConfiguration = RelayConfiguration(),
        clock: any RelayClock = SystemClock(), readers: [String: any ConversationReader] = [:],
        failures: FailureReporting = .chat(log: { _ in }), transcriber: (any Transcriber)? = nil
    ) {
        self.tribunal = tribunal
        self.store = store
        self.configuration = configuration
        self.clock = clock
        self.readers = readers
        self.roles = TeamRoles(readers: readers, store: store, operators: configuration.operatorAdmins, clock: clock)
        self.failures = failures
        self.transcriber = transcriber
        self.voiceMemory = transcriber.map { ByteBudget(capacity: $0.limits.memoryBudget) }
    }

    /// The same relay, with failures reported another way (the terminal adapter shows the operator
    /// every detail).
    public func reportingFailures(_ failures: FailureReporting) -> Relay {
        var relay = self
        relay.failures = failures
        return relay
    }

    func now() -> Date { clock.now }

    /// Handles one event. Returns nil when the event is a platform retry of one already handled.
    /// `progress` receives "Running… 2/5" updates while a chain runs.
    /// What the run keeps (history, fact-checks) is written before it returns; the run
    /// dispatcher instead writes it with the reply, in one transaction (`run`).
    public func handle(_ event: Event, progress: @escaping @Sendable (RunProgress) async -> Void = { _ in }) async -> Reply? {
        let outcome = await run(event, progress: progress)
        guard let reply = outcome.reply, !outcome.record.isEmpty else { return outcome.reply }
        do {
            let ids = try await store.record(outcome.record)
            return outcome.record.numbered(reply, ledgerIDs: ids)
        } catch {
            return .error(failures.storeFailureMessage(error, event: event))
        }
    }

    /// Handles one event and reports which command it ran, so callers (metrics) need not parse
    /// the line again, and what it keeps (`RunOutcome.record`), which the caller writes: the
    /// reply names a fact-check's number only once its record is written.
    ///
    /// The line is parsed before the event key is claimed, so even a platform's retry is
    /// counted under its command; nothing is run or answered for it.
    public func run(_ event: Event, progress: @escaping @Sendable (RunProgress) async -> Void = { _ in }) async -> RunOutcome {
        var metricName = RunOutcome.unparsed
        var event = event
        // What the run spent is kept even when it ends in a refusal after a model answered (a
        // chain whose later step is refused): the calls were made, and billed.
        var spent: (recorder: RunRecorder, command: String)?
        func kept() -> RunRecord {
            guard let spent, !spent.recorder.calls.isEmpty else { return RunRecord() }
            return RunRecord(usage: spent.recorder.finished(event, command: spent.command, at: now()).usage)
        }
        do {
            // `@bot` alone in a thread whose parent is a voice note: the note is what it means.
            if event.text.trimmingWhitespace().isEmpty { event = await withThreadVoice(event) }
            // A voice note with no command: its words, or what `/settings voice` asks for.
            if event.voice != nil && event.text.trimmingWhitespace().isEmpty {
                let action = try await voiceAction(for: event)
                event.replaceCommand(action.command, line: action.commandLine)
            }
            let customs = try await store.customCommands(team: event.team)
            // Read where the event arrived; only a custom command's name is checked here, where
            // the team's commands are known.
            let parsed = event.command.resolved(customCommands: Set(customs.map(\.name)))
            if case .success(let command) = parsed { metricName = command.kind.metricName }
            if let key = event.eventKey {
                let now = now()
                let fresh = try await store.claimEvent(key: "\(event.platform):\(key)", expiresAt: now + configuration.dedupeLifetime, now: now)
                if !fresh { return RunOutcome(reply: nil, metricName: metricName) }
            }
            let command: Command
            switch parsed {
            case .success(let parsedCommand): command = parsedCommand
            case .failure(let error): return RunOutcome(reply: .error(error.message), metricName: metricName)
            }
            event = await completed(event, for: command, customs: customs)
            // The team's budget, where it has one and the command asks models: refused past it,
            // and what it had spent kept for the 80 % word after the run.
            var budget: (limit: Double, spentBefore: Double)?
            if command.kind.asksModels, let limit = try await monthlyBudget(platform: event.platform, team: event.team) {
                let month = UsageMonth(containing: now())
                let standing = try await store.budgetStanding(platform: event.platform, team: event.team, from: month.start, to: month.end)
                var over = event.budget == .over
                if event.budget == .unchecked {
                    // A run that holds nothing (the terminal, `run`; a budget set since it was
                    // admitted): the same look, now.
                    let hold = BudgetHold(
                        platform: event.platform, team: event.team, defaultLimit: limit, reserve: estimatedCost(of: command, event: event), month: month)
                    over = !hold.fits(limit: limit, spent: standing.spent, reserved: standing.reserved)
                }
                if over { return RunOutcome(reply: try await overBudgetReply(platform: event.platform, team: event.team), metricName: metricName) }
                budget = (limit, standing.spent)
            }
            var context = try await RequestContext(event: event, command: command, relay: self, customs: customs)
            spent = (context.recorder, command.kind.name)
            if Self.needsVoice(command, event: event, customs: customs) { try await hear(&context) }
            // This run's backend failures get an error id and a log line as they leave the backend.
            var run = self
            run.tribunal = ReportingTribunal(base: tribunal, reporting: failures, event: event, recorder: context.recorder)
            var reply = try await run.execute(context, progress: progress)
            if context.receipts, let receipt = UsageFormat.receipt(context.recorder.calls), reply.kind == .result {
                // The footer's last line: after the model, the time and any agreement.
                reply.notes.append(receipt)
            }
            if let budget,
                let notice = await budgetNotice(
                    event, limit: budget.limit, spentBefore: budget.spentBefore, spentNow: budget.spentBefore + (context.recorder.calls.cost ?? 0))
            {
                reply.notes.append(notice)
            }
            return RunOutcome(reply: reply, metricName: metricName, record: context.recorder.finished(event, command: command.kind.name, at: now()))
        } catch let error as RelayFailure {
            return RunOutcome(reply: .error(error.message), metricName: metricName, record: kept())
        } catch {
            return RunOutcome(reply: .error(failures.storeFailureMessage(error, event: event)), metricName: metricName, record: kept())
        }
    }

    /// What a run shows as it starts where its answer must come as an edit of a message posted
    /// first (`RunDispatcher`, for a route whose platform cannot make a new message idempotent):
    /// "Working on /translate…", naming the command. Nil where the answer is private or comes
    /// at once — a line that is no command, `--private`, help, settings, lists, admin commands —
    /// which would leave a public placeholder behind for nothing; only commands that ask models
    /// (and chain runs) answer in public and take a while.
    public func startingStep(for event: Event) async -> RunProgress? {
        let command: Command
        if event.voice != nil && event.text.trimmingWhitespace().isEmpty {
            command = ((try? await voiceAction(for: event)) ?? .transcript).command
        } else {
            let customs = (try? await store.customCommands(team: event.team)) ?? []
            guard case .success(let resolved) = event.command.resolved(customCommands: Set(customs.map(\.name))) else { return nil }
            command = resolved
        }
        guard !command.options.isPrivate else { return nil }
        switch command.kind {
        case .translate, .action, .tribunal, .custom, .transcribe: return .started("/" + command.kind.name)
        case .chain(.run(let name)): return .started("/run " + name)
        default: return nil
        }
    }

    /// Fills in what the adapter left to be asked only when needed: the thread's messages (for
    /// commands that may read the thread and have no other input).
    private func completed(_ event: Event, for command: Command, customs: [CustomCommand]) async -> Event {
        guard let reader = readers[event.platform] else { return event }
        var event = event
        // Before the thread's messages: the parent's voice note comes first, as a replied-to
        // message's text would.
        if Self.mayHear(command, customs: customs) { event = await withThreadVoice(event) }
        if event.thread != nil && event.threadMessages.isEmpty && Self.mayReadThread(command, event: event, customs: customs) {
            event.threadMessages = await reader.threadMessages(event, limit: configuration.threadMessageLimit)
        }
        return event
    }

    /// Whether the command could use the thread: summarize, extract and tribunal with no typed
    /// text and no replied-to message, a chain run (its first block may be `input:thread`), and
    /// a custom command whose template reads `{context}` without a replied-to message.
    static func mayReadThread(_ command: Command, event: Event, customs: [CustomCommand]) -> Bool {
        switch command.kind {
        case .tribunal, .action(.summarize), .action(.extract):
            return command.text.isEmpty && event.repliedTo == nil && event.voice == nil
        case .chain(.run):
            return true
        case .custom(let name):
            return event.repliedTo == nil && event.voice == nil && customs.first { $0.name == name }?.template.contains("{context}") == true
        default:
            return false
        }
    }

    private func execute(_ request: RequestContext, progress: @escaping @Sendable (RunProgress) async -> Void) async throws -> Reply {
        // Tenancy: the team's chains, commands and channel settings are its members' business.
        if request.event.isExternal && request.command.kind.managesTeamData {
            return .error(
                "You are in a channel shared with another organisation: only members of the workspace that installed Rhea Relay can see or change its chains, custom commands and channel settings. You can still run its commands and chains."
            )
        }
        if request.command.kind.needsAdmin, try await roles.source(for: request.event) == nil {
            return .error(adminRefusal(request.command.kind, platform: request.event.platform))
        }
        switch request.command.kind {
        case .translate, .action, .tribunal, .custom:
            return try await runModelCommand(request, progress: progress)
        case .transcribe:
            return transcribeCommand(request)
        case .chain(let sub):
            return try await chainCommand(sub, request, progress: progress)
        case .command(let sub):
            return try await customCommandAdmin(sub, request)
        case .settings(let sub):
            return try await settingsCommand(sub, request)
        case .history(let sub):
            return try await historyCommand(sub, request)
        case .ledger(let sub):
            return try await ledgerCommand(sub, request)
        case .council:
            return await councilCommand()
        case .admin(let sub):
            return try await adminCommand(sub, request)
        case .usage(let sub):
            return try await usageCommand(sub, request)
        case .help(let topic):
            // A guest is not shown the team's own commands.
            return help(topic, customs: request.event.isExternal ? [] : request.customs)
        }
    }

    /// Keeps a consensus for the team's ledger, as the effective retention allows (`off`: not
    /// at all; `metadata`: verdicts, scores and timings without any text). With `numbersReply`,
    /// the reply names it (`fact-check #N`) once it is written. Returns whether it is kept.
    @discardableResult
    func recordConsensus(_ result: ConsensusResult, claim: String, origin: LedgerOrigin, _ request: RequestContext, numbersReply: Bool = false) -> Bool {
        guard request.retention != .off else { return false }
        let entry = LedgerEntry(
            result, claim: claim, team: request.event.team, user: request.event.user, channel: request.event.channel,
            origin: origin, keepTexts: request.retention == .full, createdAt: now())
        request.recorder.keep(entry, numbersReply: numbersReply)
        return true
    }

    /// Keeps a finished run for history, as the effective retention allows.
    func record(_ request: RequestContext, command: String, reply: Reply, consensus: ConsensusResult? = nil, elapsed: Duration) {
        let retention = request.retention
        guard retention != .off else { return }
        let keepText = retention == .full
        let entry = HistoryEntry(
            team: request.event.team, user: request.event.user, channel: request.event.channel, command: command,
            commandLine: keepText ? request.event.text : nil, resultText: keepText ? reply.body : nil,
            succeeded: reply.kind != .error, agreement: consensus?.agreement, modelsAnswered: consensus?.answered,
            modelsAsked: consensus?.asked, elapsed: elapsed.seconds, createdAt: now(), verdict: consensus?.verdict,
            scoreMeaning: consensus?.scoreMeaning, agreeing: consensus?.agreeing,
            failure: reply.kind == .error ? request.recorder.failure ?? "refused" : nil)
        request.recorder.keep(entry)
    }
}

/// What one run produced, and which command it was.
public struct RunOutcome: Sendable {
    /// The label metrics use when the line was not a valid command.
    public static let unparsed = "unparsed"

    /// The reply; nil when the event was a platform retry of one already handled.
    public var reply: Reply?
    /// The command for metrics: a built-in's canonical name, `custom` for a team's own command,
    /// `unparsed` for a line that is not a command — a bounded set of labels.
    public var metricName: String
    /// What the run keeps, not written yet: the caller writes it (with the reply, where it can).
    public var record = RunRecord()
}

extension CommandKind {
    /// The command's metrics label (custom commands share one, so labels stay bounded).
    public var metricName: String {
        if case .custom = self { return "custom" }
        return name
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
    /// The words of the event's voice note, once heard (`Relay.hear`); also in `event.repliedTo`.
    var transcript: String?
    /// What the run keeps, collected as it goes.
    let recorder = RunRecorder()

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

    /// Whether the reply's footer shows what the run's model calls used: the user's setting,
    /// else the channel's, else off.
    var receipts: Bool { userSettings.receipts ?? channelSettings.receipts ?? false }
}

/// Finds a command's input: typed text › the replied-to message › the thread (where allowed).
public enum InputResolver {
    public static func resolve(typed: String, event: Event, sources: InputSources) -> String? {
        if !typed.isEmpty { return typed }
        if sources.reply, let replied = event.repliedTo, !replied.isEmpty { return replied }
        if sources.thread, let thread = event.threadText, !thread.isEmpty { return thread }
        return nil
    }

    /// The reply when there is no input: exactly what to add, and where. Where the command
    /// replies to a message the platform would not let the bot read (`unreadableReply`), it says
    /// so first, and does not suggest replying again.
    public static func missingInputMessage(
        command: String, noun: String, example: String, sources: InputSources, unreadableReply: String? = nil
    ) -> String {
        let unreadable = sources.reply ? unreadableReply : nil
        var ways = ["add it after the command (`\(example)`)"]
        if sources.reply && unreadable == nil { ways.append("reply to a message with `/\(command)`") }
        if sources.thread { ways.append("use `/\(command)` inside a thread") }
        let list = ways.count > 1 ? ways.dropLast().joined(separator: ", ") + " or " + ways.last! : ways[0]
        return (unreadable.map { $0 + " " } ?? "") + "`/\(command)` needs \(noun): \(list)."
    }
}

/// What the relay may ask a platform about an event's surroundings, and only when the command
/// needs it: who may change team-wide things, and what a thread says.
///
/// Asked lazily, from the run (never on an adapter's acknowledgement path), so a platform's
/// slow API never delays the acknowledgement and a command that needs neither pays nothing.
/// Implementations cache what they can and bound what they read.
public protocol ConversationReader: Sendable {
    /// Whether the event's user administers the team (Slack: a workspace admin or owner); nil
    /// when the platform could not be asked (an outage), which counts as no and is not kept.
    /// `TeamRoles` asks only when nothing else made the user an admin, and keeps the answer briefly.
    func isAdmin(_ event: Event) async -> Bool?
    /// Who the platform's own admins are, as a refusal names them ("Slack workspace admins and
    /// owners").
    var platformAdmins: String { get }
    /// The user `mention` names, as typed after `/admin grant` in the event's message (`@ann`;
    /// Discord's `<@123>`): the platform's user id, or why it names nobody the role could go to.
    /// The default finds it among the message's mentions the adapter decoded (`Event.mentions`).
    func user(mentioned mention: String, in event: Event) async -> MentionedUserLookup
    /// The texts of the thread `event.thread`, oldest first, at most `limit` messages; empty when
    /// there is no thread or it cannot be read.
    func threadMessages(_ event: Event, limit: Int) async -> [String]
    /// The audio of a voice note the platform passed (`Event.voice`), fetched from the platform's
    /// own file host as configured (never from an address in a message), at most `maxBytes`:
    /// a larger file is refused as soon as that is known. In memory only.
    func audio(_ clip: VoiceClip, maxBytes: Int) async throws(VoiceFetchError) -> [UInt8]
    /// The voice note the message that starts `event.thread` carries (Slack: an audio file in
    /// the thread's parent), as a clip of origin `.repliedTo`; nil when it carries none, there
    /// is no thread, or the platform cannot tell. Asked only for an event without a clip or a
    /// replied-to message of its own, whose command could use a voice note's words.
    func threadVoice(_ event: Event) async -> VoiceClip?
}

extension ConversationReader {
    /// Platforms that do not pass voice notes yet.
    public func audio(_ clip: VoiceClip, maxBytes: Int) async throws(VoiceFetchError) -> [UInt8] {
        throw .notSupported
    }

    /// Platforms whose threads start from no voice note the relay can read.
    public func threadVoice(_ event: Event) async -> VoiceClip? { nil }

    public func user(mentioned mention: String, in event: Event) async -> MentionedUserLookup {
        MentionedUserLookup.among(event.mentions, mention)
    }
}

/// Whom a mention names (`ConversationReader.user(mentioned:in:)`).
public enum MentionedUserLookup: Sendable, Hashable {
    /// A person: their id on the platform, and the name to show.
    case person(id: String, name: String)
    /// A bot (the relay itself or another): the role is for people.
    case bot(name: String)
    /// Nobody: what was wrong and how to name the person instead.
    case nobody(String)
    /// The platform could not be asked; why.
    case unavailable(String)

    /// The mention among those the message carried, compared as shown, with or without its `@`
    /// and in any case; a mention the message did not carry names nobody.
    public static func among(_ mentions: [MentionedUser], _ typed: String) -> MentionedUserLookup {
        func plain(_ text: String) -> String { String(text.drop { $0 == "@" }).lowercased() }
        guard let found = mentions.first(where: { plain($0.shown) == plain(typed) }) else {
            return .nobody("`\(typed)` is not a mention of anyone: type `@` and pick the person from the list, so the message names them.")
        }
        return found.isBot == true ? .bot(name: found.shown) : .person(id: found.id, name: found.shown)
    }
}

/// What a run keeps besides its reply: its history row and the fact-checks it asked for.
///
/// Written in the transaction that finishes the run — with its reply into the outbox and its
/// item out of the inbox (`InboxStore.finishRun`) — so every command costs the store three
/// writes: its admission, its run's end, its delivery's mark; a command that changes the team's
/// data (`/settings`, `/chain save`, `/history clear`) makes that change there too. A crash
/// before that transaction keeps neither the reply nor the rows, and the run runs again; never
/// one without the other.
public struct RunRecord: Sendable, Hashable {
    /// The run, as `/history` shows it; nil when retention is `off`.
    public var history: HistoryEntry?
    /// Consensus results to keep in the team's ledger (a tribunal's, a chain's verify gates').
    public var ledger: [LedgerEntry]
    /// The entry of `ledger` the reply names (`fact-check #N` in its footer), whose number is
    /// known only once it is written: the store fills it in (`numbered`).
    public var numberedByReply: Int?
    /// The changes to the team's data the run's command asked for (`/settings`, `/chain save`,
    /// `/history clear`…), applied in order before the rows above.
    public var changes: [TeamChange]
    /// The model calls the run made, kept whatever the retention (no text in them).
    public var usage: RunUsage?

    public init(
        history: HistoryEntry? = nil, ledger: [LedgerEntry] = [], numberedByReply: Int? = nil, changes: [TeamChange] = [], usage: RunUsage? = nil
    ) {
        self.history = history
        self.ledger = ledger
        self.numberedByReply = numberedByReply
        self.changes = changes
        self.usage = usage
    }

    /// Nothing to write.
    public var isEmpty: Bool { history == nil && ledger.isEmpty && changes.isEmpty && (usage?.calls.isEmpty ?? true) }

    /// `entry` with the number of the fact-check its reply names, given the ids `ledger` got.
    public func numbered(_ entry: OutboxEntry, ledgerIDs: [Int64]) -> OutboxEntry {
        guard case .reply(let reply) = entry.content else { return entry }
        var entry = entry
        entry.content = .reply(numbered(reply, ledgerIDs: ledgerIDs))
        return entry
    }

    /// `reply` with the number of the fact-check it names, given the ids `ledger` got.
    public func numbered(_ reply: Reply, ledgerIDs: [Int64]) -> Reply {
        guard let index = numberedByReply, ledgerIDs.indices.contains(index), reply.footer != nil else { return reply }
        var reply = reply
        reply.footer?.ledgerID = ledgerIDs[index]
        return reply
    }
}

/// A change to what a team keeps that a command asks for. The command reads what it needs to
/// answer (does the chain exist, how many runs will go) and leaves the write to its run's end,
/// so every command costs the store the same three writes.
public enum TeamChange: Sendable, Hashable {
    case saveSettings(Settings, SettingsScope)
    case saveCustomCommand(CustomCommand)
    case deleteCustomCommand(team: String, name: String)
    /// Inserts the chain, or replaces its source and `updatedAt` (`Store.saveChain`).
    case saveChain(SavedChain)
    case deleteChain(team: String, name: String)
    case markLedger(team: String, id: Int64, mark: LedgerMark)
    /// `/history clear`: the user's runs and the fact-checks they asked.
    case forget(team: String, user: String)
    /// `/admin grant`: inserts the grant, or keeps the one already there.
    case grantAdmin(AdminGrant)
    /// `/admin revoke`.
    case revokeAdmin(platform: String, team: String, user: String)
}

/// Collects one run's record while it runs: its commands and a chain's verify gates add to it
/// from wherever they run.
final class RunRecorder: Sendable {
    private struct Record {
        var run = RunRecord()
        var calls: [ModelUsage] = []
        var failure: String?
    }
    private let record = Mutex(Record())

    /// What the run keeps so far, without its model calls (`finished` adds them).
    var current: RunRecord { record.withLock { $0.run } }

    /// The model calls so far.
    var calls: [ModelUsage] { record.withLock { $0.calls } }

    /// The backend's last failure in this run (`TribunalError.label`), if any.
    var failure: String? { record.withLock { $0.failure } }

    func failed(_ label: String) {
        record.withLock { $0.failure = label }
    }

    /// What the run keeps, its model calls with it, for the run of `command` on `event`.
    func finished(_ event: Event, command: String, at: Date) -> RunRecord {
        record.withLock { record in
            var run = record.run
            if !record.calls.isEmpty {
                run.usage = RunUsage(
                    platform: event.platform, team: event.team, user: event.user, command: command, run: UUID().uuidString, at: at,
                    calls: record.calls)
            }
            return run
        }
    }

    func keep(_ history: HistoryEntry) {
        record.withLock { $0.run.history = history }
    }

    /// Adds a change to the team's data, applied with the run's end.
    func keep(_ change: TeamChange) {
        record.withLock { $0.run.changes.append(change) }
    }

    /// Adds model calls that answered.
    func keep(_ calls: [ModelUsage]) {
        guard !calls.isEmpty else { return }
        record.withLock { $0.calls += calls }
    }

    /// Adds a consensus to keep; `numbersReply` when the reply is to name it.
    func keep(_ entry: LedgerEntry, numbersReply: Bool = false) {
        record.withLock { record in
            record.run.ledger.append(entry)
            if numbersReply { record.run.numberedByReply = record.run.ledger.count - 1 }
        }
    }
}
