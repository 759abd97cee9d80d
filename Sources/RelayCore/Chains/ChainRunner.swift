import Foundation
import Synchronization

/// What a chain runs with: its input, and the caller's defaults.
public struct RunContext: Sendable {
    /// The resolved input text (typed, replied-to, or thread), if any.
    public var input: String?
    /// The whole thread, for `input:thread`.
    public var thread: String?
    /// Starting tier; `model:TIER` and `escalate` change it for later blocks.
    public var tier: Tier
    /// Models per `verify`.
    public var k: Int
    /// For `translate` without a language, and `{lang}`.
    public var language: Language
    /// The team's custom commands, by name.
    public var customCommands: [String: CustomCommand]
    /// For `{user}`.
    public var userName: String

    public init(
        input: String?, thread: String? = nil, tier: Tier = .cheap, k: Int = 3, language: Language = .english,
        customCommands: [String: CustomCommand] = [:], userName: String = "user"
    ) {
        self.input = input
        self.thread = thread
        self.tier = tier
        self.k = k
        self.language = language
        self.customCommands = customCommands
        self.userName = userName
    }
}

/// How a chain run ended.
public struct ChainOutcome: Sendable {
    public enum Status: Sendable, Hashable {
        case completed
        /// A gate or limit stopped the run; the message says why and what to do.
        case stopped(String)
        /// The backend failed.
        case failed(TribunalError)
    }

    public var status: Status
    /// The text after the last block that ran.
    public var text: String
    /// `output:private`.
    public var isPrivate: Bool
    /// The last `verify` result, for the agreement footer.
    public var lastVerification: ConsensusResult?
    public var modelCalls: Int
    /// One line per block that ran, for the reply's notes.
    public var log: [String]
    /// The models that wrote or judged, each once, in the order first heard from.
    public var models: [String]
}

/// Runs a chain block by block against a backend, reporting progress after each block.
public struct ChainRunner: Sendable {
    public var tribunal: any Tribunal
    public var limits: ChainLimits
    /// Told of every answered `verify` as it is answered — the text judged and the consensus —
    /// so the ledger records it before the next one is asked (the council learns from it).
    public var onVerification: @Sendable (_ text: String, _ result: ConsensusResult) async -> Void

    public init(
        tribunal: any Tribunal, limits: ChainLimits = ChainLimits(),
        onVerification: @escaping @Sendable (_ text: String, _ result: ConsensusResult) async -> Void = { _, _ in }
    ) {
        self.tribunal = tribunal
        self.limits = limits
        self.onVerification = onVerification
    }

    /// Runs `chain`, telling `progress` after each block. With `writingTitle`, the last block that
    /// writes text — when no `verify` or `loop` comes after it to judge or redo its text — is
    /// shown as the model writes it (`RunProgress.writing`, titled so), and no block's progress
    /// line comes after it to cover it.
    public func run(
        _ chain: Chain, context: RunContext, writingTitle: String? = nil, progress: @escaping @Sendable (RunProgress) async -> Void = { _ in }
    ) async -> ChainOutcome {
        var state = RunState(text: context.input ?? "", tier: context.tier)
        let total = chain.blocks.count
        let streamed = writingTitle.flatMap { _ in Self.lastWritingBlock(chain) }
        let wrote = WroteText()
        do {
            for (index, block) in chain.blocks.enumerated() {
                let number = index + 1
                let writing: PartialText? =
                    index == streamed
                    ? { @Sendable text in
                        wrote.set()
                        await progress(.writing(text, title: writingTitle))
                    } : nil
                try await step(block, number: number, context: context, state: &state, writing: writing)
                // Once the answer showed as written, no progress line covers it (a backend that
                // cannot stream shows its lines as before).
                if wrote.isSet { continue }
                await progress(RunProgress(completed: number, total: total, block: block.label))
            }
            return state.outcome(.completed)
        } catch let stop as Stop {
            return state.outcome(stop.status)
        } catch {
            return state.outcome(.stopped("The chain stopped unexpectedly: \(error)"))
        }
    }

    /// The index of the block whose text is the chain's answer as it is written: the last model,
    /// action or custom block, when only `input` and `output` blocks come after it.
    public static func lastWritingBlock(_ chain: Chain) -> Int? {
        guard let last = chain.blocks.lastIndex(where: { $0.transformsText }) else { return nil }
        return chain.blocks[(last + 1)...].allSatisfy { if case .output = $0 { true } else { false } } ? last : nil
    }

    // MARK: - Blocks

    private func step(_ block: Block, number: Int, context: RunContext, state: inout RunState, writing: PartialText? = nil) async throws {
        switch block {
        case .input(let thread):
            if thread {
                guard let text = context.thread, !text.isEmpty else {
                    throw Stop(.stopped("Block \(number) (`input:thread`) needs a thread: run the chain inside a thread."))
                }
                state.text = text
            }
            state.log.append("\(number). \(block.label)")
        case .model, .action, .custom:
            let input = state.text
            state.text = try await transform(block, text: input, number: number, context: context, state: &state, writing: writing)
            state.lastTransform = (block, input)
            state.log.append("\(number). \(block.label) · \(state.tier.rawValue)")
        case .verify(let threshold, let escalate):
            try await verify(threshold: threshold, escalate: escalate, number: number, context: context, state: &state)
        case .loop(let times):
            guard let (repeated, _) = state.lastTransform else {
                throw Stop(.stopped("Block \(number) (`loop`) has no model block before it to repeat."))
            }
            for _ in 1..<times {
                let input = state.text
                state.text = try await transform(repeated, text: input, number: number, context: context, state: &state)
                state.lastTransform = (repeated, input)
            }
            state.log.append("\(number). \(block.label) (\(repeated.label) ×\(times))")
        case .output(let isPrivate):
            state.isPrivate = isPrivate
        }
    }

    /// Runs a text-transforming block once at the current tier. `escalated`: the block runs again
    /// at a tier `escalate` chose, which overrides a tier the block names (else `model:cheap`
    /// would pin an escalation back to where it failed).
    private func transform(
        _ block: Block, text: String, number: Int, context: RunContext, state: inout RunState, writing: PartialText? = nil,
        escalated: Bool = false
    ) async throws -> String {
        let request: QuickRequest
        switch block {
        case .model(let tier, let prompt):
            if let tier, !escalated { state.tier = tier }
            let filled = Template.fill(prompt ?? "{input}", input: text, context: context.thread ?? "", user: context.userName, language: context.language)
            request = QuickRequest(action: .freeform, text: filled, tier: state.tier)
        case .action(let action):
            request = QuickRequest(action: Self.quickAction(action, language: context.language), text: text, tier: state.tier)
        case .custom(let name):
            guard let command = context.customCommands[name] else {
                throw Stop(
                    .stopped("Block \(number): the custom command `\(name)` no longer exists. Add it again with `/command add \(name) …` or edit the chain."))
            }
            let filled = Template.fill(command.template, input: text, context: context.thread ?? "", user: context.userName, language: context.language)
            request = QuickRequest(action: .freeform, text: filled, tier: state.tier)
        default:
            return text
        }
        try spend(1, number: number, state: &state)
        let result: QuickResult
        do throws(TribunalError) {
            if let writing {
                result = try await tribunal.quick(request, streaming: writing)
            } else {
                result = try await tribunal.quick(request)
            }
        } catch {
            throw Stop(.failed(error))
        }
        state.writer = result.model
        state.heard(from: result.model.map { [$0] } ?? [])
        let output = result.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !output.isEmpty else {
            throw Stop(.stopped("Block \(number) (`\(block.dsl)`): the model returned an empty answer. Try again or use a higher tier."))
        }
        return output
    }

    private func verify(threshold: Int, escalate: Bool, number: Int, context: RunContext, state: inout RunState) async throws {
        while true {
            try spend(context.k, number: number, state: &state)
            let result: ConsensusResult
            do throws(TribunalError) {
                result = try await tribunal.consensus(ConsensusRequest(claim: Prompts.verifyClaim(state.text), k: context.k, tier: state.tier))
            } catch {
                throw Stop(.failed(error))
            }
            state.lastVerification = result
            state.heard(from: result.models)
            await onVerification(state.text, result)
            // A model judging its own text is not a second opinion: say so wherever the result shows.
            let selfCheck = selfCheckingModel(result, writer: state.writer).map { " · a self-check: \($0) judged its own text" } ?? ""
            let percent = Int((result.agreement * 100).rounded())
            let verdictOK = result.verdict.map(\.isAffirmative) ?? true
            // The score in the reply's own words: a probability is not called agreement.
            let score = ScoreWords.inSentence(result.agreement, meaning: result.scoreMeaning, verdict: result.verdict)
            let noVerdict = result.verdict == nil && result.scoreMeaning == .probabilityRight
            if percent >= threshold && verdictOK && !noVerdict {
                state.log.append("\(number). verify:\(threshold) passed (\(score)) · \(state.tier.rawValue)\(selfCheck)")
                return
            }
            let why =
                noVerdict
                ? "no model gave a verdict" : verdictOK ? "\(score) is below \(threshold)%" : "the verdict is \(result.verdict!.rawValue) (\(score))"
            func stop(_ hint: String) -> Stop {
                state.log.append("\(number). verify:\(threshold) failed: \(why) · \(state.tier.rawValue)\(selfCheck)")
                return Stop(.stopped("Stopped at block \(number) (`verify:\(threshold)`): \(why)\(selfCheck.isEmpty ? "" : " in a self-check") (\(hint))."))
            }
            guard escalate else { throw stop("add `escalate` after `verify:\(threshold)` to retry one tier higher") }
            switch escalation(above: state.tier, writer: state.writer) {
            case .none(let reason):
                throw stop(reason)
            case .to(let higher):
                state.log.append("\(number). verify:\(threshold) failed at \(state.tier.rawValue): \(why)\(selfCheck); escalating to \(higher.rawValue)")
                state.tier = higher
                if let (block, input) = state.lastTransform {
                    state.text = try await transform(block, text: input, number: number, context: context, state: &state, escalated: true)
                }
            }
        }
    }

    private enum Escalation {
        case to(Tier)
        /// Why there is nowhere to go, as the stop's hint.
        case none(String)
    }

    /// Where `escalate` retries: the next tier up. Where the backend says who answers each tier
    /// (the council), the next tier up that has a model of its own other than the one that wrote
    /// the text: a tier that only borrows its neighbours' models, or is served by the same model,
    /// would re-ask that model the same thing, which is retrying until lucky, not escalating.
    private func escalation(above tier: Tier, writer: String?) -> Escalation {
        guard tier.next != nil else { return .none("even at the top tier") }
        let writerEndpoint = writer.map(endpoint(of:))
        var candidate = tier.next
        while let next = candidate {
            guard let roster = tribunal.roster(for: next) else { return .to(next) }
            if roster.hasOwnModels, let first = roster.writers.first, first.endpoint != writerEndpoint { return .to(next) }
            candidate = next.next
        }
        let model = writer.map { "`\($0)`" } ?? "the one that wrote it"
        return .none("no tier above \(tier.rawValue) has a model other than \(model) to retry with; add one under `council.models` to escalate")
    }

    /// The writer's name when every judge that answered is the model that wrote the text (by
    /// name, or by endpoint under another name); nil when another model judged, or when the
    /// writer is not known.
    private func selfCheckingModel(_ result: ConsensusResult, writer: String?) -> String? {
        guard let writer, !result.models.isEmpty else { return nil }
        let writerEndpoint = endpoint(of: writer)
        return result.models.allSatisfy { endpoint(of: $0) == writerEndpoint } ? writer : nil
    }

    /// What makes a model the same under another name, where the backend says; else its name.
    private func endpoint(of name: String) -> String {
        for tier in Tier.allCases {
            if let model = tribunal.roster(for: tier)?.model(named: name) { return model.endpoint }
        }
        return name
    }

    /// Charges model calls against the per-run limit before making them.
    private func spend(_ calls: Int, number: Int, state: inout RunState) throws {
        guard state.modelCalls + calls <= limits.maxModelCalls else {
            throw Stop(.stopped("Stopped at block \(number): the run would exceed \(limits.maxModelCalls) model calls (the per-run limit)."))
        }
        state.modelCalls += calls
    }

    static func quickAction(_ action: ChainAction, language: Language) -> QuickAction {
        switch action {
        case .translate(let target): .translate(to: target ?? language)
        case .rewrite(let style): .rewrite(style: style)
        case .summarize: .summarize
        case .extract: .extract
        case .grammar: .grammar
        case .explain: .explain
        }
    }
}

private struct Stop: Error {
    var status: ChainOutcome.Status
    init(_ status: ChainOutcome.Status) { self.status = status }
}

private struct RunState {
    var text: String
    var tier: Tier
    var isPrivate = false
    var lastVerification: ConsensusResult?
    var modelCalls = 0
    var lastTransform: (Block, String)?
    /// The model that wrote the current text, when the backend says.
    var writer: String?
    var log: [String] = []
    var models: [String] = []

    init(text: String, tier: Tier) {
        self.text = text
        self.tier = tier
    }

    func outcome(_ status: ChainOutcome.Status) -> ChainOutcome {
        ChainOutcome(
            status: status, text: text, isPrivate: isPrivate, lastVerification: lastVerification, modelCalls: modelCalls, log: log, models: models)
    }

    mutating func heard(from names: [String]) {
        for name in names where !models.contains(name) { models.append(name) }
    }
}

/// Whether a block showed its text as it was written.
private final class WroteText: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
