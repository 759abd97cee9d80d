/// What the user sees, platform-neutral; each adapter renders it in its own format.
public struct Reply: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A model's answer or a chain's output.
        case result
        /// Something failed or was refused; says what to do.
        case error
        /// Help, lists, confirmations.
        case info
    }

    public var kind: Kind
    /// A short heading ("Translation · French").
    public var title: String?
    public var body: String
    /// Agreement, models and time for consensus results.
    public var footer: AgreementFooter?
    /// Small print: which model answered, how a chain stopped.
    public var notes: [String]
    /// Only the caller should see it (`--private`, `output:private`, most errors).
    public var isPrivate: Bool
    /// Buttons where the platform has them ("Post to channel", "Run again").
    public var actions: [ReplyAction]
    /// The models that answered, in order, where the backend named them: what the notes and the
    /// footer show as text, kept as data for output read by scripts (`run --json`). Nil in
    /// replies stored before it existed.
    public var models: [String]?
    /// Only the asker may ever read it (a sign-in link): where the platform cannot show it to them
    /// alone in this conversation, it is not sent there at all (`Reply.secretRefused`).
    public var isSecret: Bool = false

    public init(
        kind: Kind, title: String? = nil, body: String, footer: AgreementFooter? = nil, notes: [String] = [],
        isPrivate: Bool = false, actions: [ReplyAction] = [], models: [String]? = nil
    ) {
        self.kind = kind
        self.title = title
        self.body = body
        self.footer = footer
        self.notes = notes
        self.isPrivate = isPrivate
        self.actions = actions
        self.models = models
    }

    public static func error(_ message: String) -> Reply {
        Reply(kind: .error, body: message, isPrivate: true)
    }

    public static func info(_ body: String, title: String? = nil) -> Reply {
        Reply(kind: .info, title: title, body: body, isPrivate: true)
    }

    /// Whether a private reply must never fall back to the conversation when the private way
    /// fails: a result (the asker chose to keep it to themselves) or a secret. Other private
    /// replies (errors, help) are shown in the conversation rather than lost.
    public var staysPrivate: Bool { kind == .result || isSecret }

    /// What the asker is sent instead of a secret reply where it cannot be shown to them alone.
    public static let secretRefused = Reply.error(
        "That answer holds a sign-in link, which is sent only where you alone can read it, and it could not reach you alone from here. Ask again in a direct message with the bot."
    )

    private enum CodingKeys: String, CodingKey {
        case kind, title, body, footer, notes, isPrivate, actions, models, isSecret
    }

    // Written by hand for `isSecret` alone: replies stored before it existed have no such key,
    // and a reply that is not secret is stored without it, as before.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(Kind.self, forKey: .kind)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        body = try container.decode(String.self, forKey: .body)
        footer = try container.decodeIfPresent(AgreementFooter.self, forKey: .footer)
        notes = try container.decode([String].self, forKey: .notes)
        isPrivate = try container.decode(Bool.self, forKey: .isPrivate)
        actions = try container.decode([ReplyAction].self, forKey: .actions)
        models = try container.decodeIfPresent([String].self, forKey: .models)
        isSecret = try container.decodeIfPresent(Bool.self, forKey: .isSecret) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encode(body, forKey: .body)
        try container.encodeIfPresent(footer, forKey: .footer)
        try container.encode(notes, forKey: .notes)
        try container.encode(isPrivate, forKey: .isPrivate)
        try container.encode(actions, forKey: .actions)
        try container.encodeIfPresent(models, forKey: .models)
        if isSecret { try container.encode(true, forKey: .isSecret) }
    }
}

/// A button under a reply; each adapter renders it its own way, or not at all.
public enum ReplyAction: Sendable, Hashable, Codable {
    /// Post this private result in the channel, for everyone.
    case postToChannel
    /// Run the same command line again.
    case runAgain(commandLine: String)
}

extension Reply {
    /// The buttons a result offers its caller: "Run again" on model results, and "Post to
    /// channel" when the result was private. Errors and info offer none.
    public func withActions(for event: Event) -> Reply {
        guard kind == .result else { return self }
        var reply = self
        reply.actions = isPrivate ? [.postToChannel, .runAgain(commandLine: event.text)] : [.runAgain(commandLine: event.text)]
        return reply
    }
}

/// The agreement line under a consensus result.
public struct AgreementFooter: Sendable, Hashable, Codable {
    public var verdict: Verdict?
    /// 0…1.
    public var agreement: Double
    public var scoreMeaning: ScoreMeaning
    public var answered: Int
    public var asked: Int
    public var elapsed: Duration
    public var dissent: [Dissent]
    /// How many answering models gave the verdict, when the backend counts them.
    public var agreeing: Int?
    /// The fact-check's number in the team's ledger, when it was recorded: shown in the summary,
    /// where a 👍 or 👎 on the reply finds it.
    public var ledgerID: Int64?

    private enum CodingKeys: String, CodingKey {
        case verdict, agreement, scoreMeaning, answered, asked, elapsed, dissent, agreeing, ledgerID
    }

    public init(_ result: ConsensusResult) {
        self.verdict = result.verdict
        self.agreement = result.agreement
        self.scoreMeaning = result.scoreMeaning
        self.answered = result.answered
        self.asked = result.asked
        self.elapsed = result.elapsed
        self.dissent = result.dissent
        self.agreeing = result.agreeing
    }

    // `elapsed` is stored as seconds (a number), as it always was in outbox rows, not as
    // Duration's own two-integer encoding.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        verdict = try container.decodeIfPresent(Verdict.self, forKey: .verdict)
        agreement = try container.decode(Double.self, forKey: .agreement)
        scoreMeaning = try container.decode(ScoreMeaning.self, forKey: .scoreMeaning)
        answered = try container.decode(Int.self, forKey: .answered)
        asked = try container.decode(Int.self, forKey: .asked)
        elapsed = Duration.clampedSeconds(try container.decode(Double.self, forKey: .elapsed))
        dissent = try container.decode([Dissent].self, forKey: .dissent)
        // Absent from replies stored before issue 14.
        agreeing = try container.decodeIfPresent(Int.self, forKey: .agreeing)
        ledgerID = try container.decodeIfPresent(Int64.self, forKey: .ledgerID)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(verdict, forKey: .verdict)
        try container.encode(agreement, forKey: .agreement)
        try container.encode(scoreMeaning, forKey: .scoreMeaning)
        try container.encode(answered, forKey: .answered)
        try container.encode(asked, forKey: .asked)
        try container.encode(elapsed.seconds, forKey: .elapsed)
        try container.encode(dissent, forKey: .dissent)
        try container.encodeIfPresent(agreeing, forKey: .agreeing)
        try container.encodeIfPresent(ledgerID, forKey: .ledgerID)
    }

    /// Agreement as a whole percentage.
    public var percent: Int { Int((agreement * 100).rounded()) }

    /// "Agreement 82% · 3/3 models · 1.2 s" ("4 of 5 answered" when some did not) — or, for a
    /// success-share score, what it really is; for a learned council, "Verdict: false · 87% likely
    /// right · 3 of 4 agree · 4/4 models · 2.1 s".
    public var summary: String {
        var parts: [String] = []
        if let verdict { parts.append("Verdict: \(verdict.rawValue)") }
        // No model gave a verdict: no figure (issue 29); beside a probability, the share that
        // agreed (issue 14, point 3).
        parts.append(ScoreWords.line(agreement, meaning: scoreMeaning, verdict: verdict, agreeing: agreeing, answered: answered))
        // Past a deadline, say plainly that not everyone answered.
        parts.append(answered < asked ? "\(answered) of \(asked) answered" : "\(answered)/\(asked) models")
        parts.append(Self.seconds(elapsed))
        if let ledgerID { parts.append(LedgerReference.label(ledgerID)) }
        return parts.joined(separator: " · ")
    }

    /// The honest caveat for backends whose score is not agreement.
    public var caveat: String? {
        scoreMeaning == .answeredShare
            ? "This score is the share of models that answered, not their agreement (the backend has no tribunal credentials)."
            : nil
    }

    package static func seconds(_ value: Duration) -> String {
        let tenths = (value.seconds * 10).rounded() / 10
        return "\(tenths) s"
    }
}

/// Progress of a run: a chain's after each block ("Running… 2/5"), the placeholder a run
/// posts as it starts where its answer must come as an edit ("Working on /translate…"), or the
/// answer so far while a model writes it (`partial`).
public struct RunProgress: Sendable, Hashable, Codable {
    public var completed: Int
    /// The chain's blocks; 0 for the starting step.
    public var total: Int
    /// The block just finished, as the DSL writes it; for the starting step, the command.
    public var block: String
    /// The answer as far as the model has written it, shown in place of the progress line; the
    /// whole answer replaces it at the end. Absent from progress stored before streaming.
    public var partial: PartialAnswer?

    public init(completed: Int, total: Int, block: String, partial: PartialAnswer? = nil) {
        self.completed = completed
        self.total = total
        self.block = block
        self.partial = partial
    }

    /// The answer so far, titled as the whole answer will be.
    public static func writing(_ text: String, title: String?) -> RunProgress {
        RunProgress(completed: 0, total: 0, block: "", partial: PartialAnswer(title: title, text: text))
    }

    /// A consensus under way: `done` of `asked` models have voted.
    public static func voting(_ done: Int, of asked: Int) -> RunProgress {
        RunProgress(completed: done, total: asked, block: votingBlock)
    }

    /// The block name a consensus's progress carries.
    static let votingBlock = "⚖ votes"

    /// The step a run shows as it starts, before any work is done: `command` as typed
    /// (`/translate`, `/run polish`). Its message is the one the answer is edited into.
    public static func started(_ command: String) -> RunProgress {
        RunProgress(completed: 0, total: 0, block: command)
    }

    /// Whether this is the starting step (no block, no total).
    public var isStart: Bool { total == 0 }

    /// Whether this counts a consensus's votes (`voting`), not a chain's blocks.
    public var isVoting: Bool { block == Self.votingBlock }

    public var line: String {
        if isVoting { return "\(completed) of \(total) have voted…" }
        return isStart ? "Working on \(block)…" : "Running… \(completed)/\(total) (\(block))"
    }
}

/// An answer while the model writes it.
public struct PartialAnswer: Sendable, Hashable, Codable {
    public var title: String?
    /// The text so far.
    public var text: String

    public init(title: String?, text: String) {
        self.title = title
        self.text = text
    }

    /// The answer so far as a reply, marked as still being written: what each platform renders
    /// (and escapes) as it renders the whole answer.
    public var reply: Reply {
        Reply(kind: .result, title: title, body: text, notes: [Self.writingNote])
    }

    /// The small print under an answer still being written.
    public static let writingNote = "✍️ writing…"
}
