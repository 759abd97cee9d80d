import Foundation
public import RelayCore
import Synchronization

extension Relay {
    /// translate, fix, rewrite…, summarize, explain, extract, ai, tribunal, and custom commands.
    /// A public answer is streamed: `progress` gets it as the model writes it (a private one
    /// arrives whole, as it must not show where the run's trace is public).
    func runModelCommand(_ request: RequestContext, progress: @escaping @Sendable (RunProgress) async -> Void) async throws -> Reply {
        let command = request.command
        let event = request.event
        let started = ContinuousClock.now
        var reply: Reply
        var consensus: ConsensusResult?

        switch command.kind {
        case .custom(let name):
            guard let custom = request.customs.first(where: { $0.name == name }) else {
                throw RelayFailure("The custom command `/\(name)` no longer exists.")
            }
            let input = InputResolver.resolve(typed: command.text, event: event, sources: .replyOnly) ?? ""
            if input.isEmpty && Template.needsInput(custom.template) {
                return .error(
                    InputResolver.missingInputMessage(
                        command: name, noun: "the text for its `{input}`", example: "/\(name) your text", sources: .replyOnly,
                        unreadableReply: event.unreadableReply))
            }
            let context = event.repliedTo ?? event.threadText ?? ""
            let prompt = Template.fill(custom.template, input: input, context: context, user: event.userName, language: request.language)
            reply = await quickReply(
                QuickRequest(action: .freeform, text: prompt, tier: request.tier), title: "/\(name)", isPrivate: request.isPrivate, progress: progress)
        case .tribunal:
            guard let claim = InputResolver.resolve(typed: command.text, event: event, sources: .replyOrThread) else {
                return .error(missingInput(for: .tribunal, event: event))
            }
            do throws(TribunalError) {
                let asked = ConsensusRequest(claim: claim, k: request.k, tier: request.tier)
                // A public verdict shows the votes coming in ("2 of 3 have voted…").
                let result: ConsensusResult
                if request.isPrivate {
                    result = try await tribunal.consensus(asked)
                } else {
                    result = try await tribunal.consensus(asked) { done, of in await progress(.voting(done, of: of)) }
                }
                consensus = result
                reply = Self.consensusReply(result, isPrivate: request.isPrivate)
            } catch {
                reply = .error(error.userMessage)
            }
            if let consensus {
                // A 👍 or 👎 on the reply finds the fact-check by its number, which the reply
                // gets as the fact-check is written with it.
                recordConsensus(consensus, claim: claim, origin: .tribunal, request, numbersReply: true)
            }
        default:
            let action = Self.quickAction(command.kind, language: request.language)
            let builtin = BuiltinCommand(action)
            guard let input = InputResolver.resolve(typed: command.text, event: event, sources: builtin.spec.input ?? .none) else {
                return .error(missingInput(for: builtin, event: event))
            }
            reply = await quickReply(
                QuickRequest(action: action, text: input, tier: request.tier), title: Self.title(for: action), isPrivate: request.isPrivate,
                progress: progress)
        }
        record(request, command: command.kind.name, reply: reply, consensus: consensus, elapsed: started.duration(to: .now))
        return reply
    }

    /// The model's answer as a reply. With `progress` (and a public reply), the answer is streamed
    /// into it as it is written; a backend that fails midway leaves what it wrote, marked as cut
    /// off, with what went wrong (and "Run again", as every result has).
    func quickReply(_ quick: QuickRequest, title: String?, isPrivate: Bool, progress: (@Sendable (RunProgress) async -> Void)? = nil) async -> Reply {
        let written = WrittenSoFar()
        do throws(TribunalError) {
            let result: QuickResult
            if let progress, !isPrivate {
                result = try await tribunal.quick(quick) { text in
                    written.set(text)
                    await progress(.writing(text, title: title))
                }
            } else {
                result = try await tribunal.quick(quick)
            }
            var notes: [String] = []
            if let model = result.model { notes.append("\(model) · \(AgreementFooter.seconds(result.elapsed))") }
            return Reply(kind: .result, title: title, body: result.text, notes: notes, isPrivate: isPrivate, models: result.model.map { [$0] })
        } catch {
            guard let text = written.text, !text.isEmpty else { return .error(error.userMessage) }
            return Reply(kind: .result, title: title, body: text, notes: [Self.cutOff(error)], isPrivate: isPrivate)
        }
    }

    /// The note under an answer the backend stopped writing.
    static func cutOff(_ error: TribunalError) -> String {
        "⚠️ Cut off: the model stopped before the end of its answer. \(error.userMessage) Run it again for the whole answer."
    }

    static func consensusReply(_ result: ConsensusResult, isPrivate: Bool) -> Reply {
        let footer = AgreementFooter(result)
        return Reply(
            kind: .result, title: "Tribunal", body: result.answer, footer: footer, notes: footer.caveat.map { [$0] } ?? [], isPrivate: isPrivate,
            models: result.models)
    }

    func missingInput(for builtin: BuiltinCommand, event: Event) -> String {
        let spec = builtin.spec
        let example = spec.examples.first { !$0.contains("(") } ?? spec.usage
        return InputResolver.missingInputMessage(
            command: spec.name, noun: spec.inputNoun, example: example, sources: spec.input ?? .none, unreadableReply: event.unreadableReply)
    }

    /// The quick action a command asks for; its table entry is `BuiltinCommand(action)`.
    static func quickAction(_ kind: CommandKind, language: Language) -> QuickAction {
        switch kind {
        case .translate(let target): .translate(to: target ?? language)
        case .action(let action): action
        default: .freeform
        }
    }

    static func title(for action: QuickAction) -> String? {
        switch action {
        case .translate(let language): "Translation · \(language.name)"
        case .grammar: "Fixed"
        case .rewrite(let style): "Rewritten · \(style?.rawValue ?? "clearer")"
        case .summarize: "Summary"
        case .explain: "Explanation"
        case .extract: "Key facts and action items"
        case .freeform: nil
        }
    }
}

/// The text a streamed answer showed last.
final class WrittenSoFar: Sendable {
    private let value = Mutex<String?>(nil)
    func set(_ text: String) { value.withLock { $0 = text } }
    var text: String? { value.withLock { $0 } }
}

/// Counts backend calls by outcome (`relay_backend_calls_total`), and the tokens and cost of
/// the model calls behind them (`relay_model_tokens_total`, `relay_model_cost_usd_total`), around
/// any backend.
public struct MeteredTribunal: Tribunal {
    let base: any Tribunal
    /// The model names that are labels of their own (the council's configured names); any other
    /// name — a gateway's, which it chooses — counts under `otherModels`.
    let modelLabels: Set<String>
    let otherModels: String

    public init(_ base: any Tribunal, modelLabels: Set<String> = [], otherModels: String = "other") {
        self.base = base
        self.modelLabels = modelLabels
        self.otherModels = otherModels
    }

    private func count(_ usage: [ModelUsage]) {
        for call in usage { RelayMetrics.modelUsage(model: modelLabels.contains(call.model) ? call.model : otherModels, call) }
    }

    public func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult {
        try await counted { () async throws(TribunalError) in try await base.quick(request) }
    }

    public func quick(_ request: QuickRequest, streaming onText: @escaping PartialText) async throws(TribunalError) -> QuickResult {
        try await counted { () async throws(TribunalError) in try await base.quick(request, streaming: onText) }
    }

    private func counted(_ call: () async throws(TribunalError) -> QuickResult) async throws(TribunalError) -> QuickResult {
        do throws(TribunalError) {
            let result = try await call()
            RelayMetrics.backendCall("quick", outcome: "ok")
            count(result.usage)
            return result
        } catch {
            RelayMetrics.backendCall("quick", outcome: error.label)
            throw error
        }
    }

    public func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        try await countedConsensus { () async throws(TribunalError) in try await base.consensus(request) }
    }

    public func consensus(_ request: ConsensusRequest, onVote: @escaping VoteCount) async throws(TribunalError) -> ConsensusResult {
        try await countedConsensus { () async throws(TribunalError) in try await base.consensus(request, onVote: onVote) }
    }

    private func countedConsensus(_ call: () async throws(TribunalError) -> ConsensusResult) async throws(TribunalError) -> ConsensusResult {
        do throws(TribunalError) {
            let result = try await call()
            RelayMetrics.backendCall("consensus", outcome: "ok")
            count(result.usage)
            return result
        } catch {
            RelayMetrics.backendCall("consensus", outcome: error.label)
            throw error
        }
    }

    public func health() async throws(TribunalError) -> BackendHealth {
        try await base.health()
    }

    public func councilReport() async -> CouncilReport? {
        await base.councilReport()
    }

    public func roster(for tier: Tier) -> TierRoster? { base.roster(for: tier) }
}

/// A backend whose failures are reported (id minted, details logged) as they leave it, for one
/// event's run: every path that turns a failure into a reply — a command, a chain block, a
/// verify gate — then shows the id and nothing more. What each answer used is kept for the
/// run's record (`RunRecorder`), whichever path asked.
struct ReportingTribunal: Tribunal {
    let base: any Tribunal
    let reporting: FailureReporting
    let event: Event
    /// The run's record so far: its fact-checks go with each consensus request until written.
    let recorder: RunRecorder

    func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult {
        do throws(TribunalError) {
            let result = try await base.quick(request)
            recorder.keep(result.usage)
            return result
        } catch {
            recorder.failed(error.label)
            throw reporting.report(error, call: "quick", event: event)
        }
    }

    func quick(_ request: QuickRequest, streaming onText: @escaping PartialText) async throws(TribunalError) -> QuickResult {
        do throws(TribunalError) {
            let result = try await base.quick(request, streaming: onText)
            recorder.keep(result.usage)
            return result
        } catch {
            recorder.failed(error.label)
            throw reporting.report(error, call: "quick", event: event)
        }
    }

    func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        try await reported { () async throws(TribunalError) in try await base.consensus(withUnwritten(request)) }
    }

    func consensus(_ request: ConsensusRequest, onVote: @escaping VoteCount) async throws(TribunalError) -> ConsensusResult {
        try await reported { () async throws(TribunalError) in try await base.consensus(withUnwritten(request), onVote: onVote) }
    }

    /// The run's fact-checks not written yet go with the request, newest first.
    private func withUnwritten(_ request: ConsensusRequest) -> ConsensusRequest {
        var request = request
        request.unwrittenFactChecks = recorder.current.ledger.reversed() + request.unwrittenFactChecks
        return request
    }

    private func reported(_ call: () async throws(TribunalError) -> ConsensusResult) async throws(TribunalError) -> ConsensusResult {
        do throws(TribunalError) {
            let result = try await call()
            recorder.keep(result.usage)
            return result
        } catch {
            recorder.failed(error.label)
            throw reporting.report(error, call: "consensus", event: event)
        }
    }

    func health() async throws(TribunalError) -> BackendHealth {
        try await base.health()
    }

    func councilReport() async -> CouncilReport? {
        await base.councilReport()
    }

    func roster(for tier: Tier) -> TierRoster? { base.roster(for: tier) }
}
