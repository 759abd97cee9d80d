public import Foundation

/// A chain saved by a team: its canonical DSL and who owns it.
public struct SavedChain: Sendable, Hashable, Codable {
    public var team: String
    public var name: String
    /// The canonical DSL (`input > grammar > output`).
    public var source: String
    public var creator: String
    public var createdAt: Date
    public var updatedAt: Date

    /// Its line as `/chain export` writes it and `/chain import` reads it: `NAME = DSL`.
    public var exportLine: String { "\(name) = \(source)" }

    public init(team: String, name: String, source: String, creator: String, createdAt: Date, updatedAt: Date) {
        self.team = team
        self.name = name
        self.source = source
        self.creator = creator
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A team's own command: `/eli5 <text>` runs `template` with placeholders filled.
public struct CustomCommand: Sendable, Hashable, Codable {
    public var team: String
    public var name: String
    public var template: String
    public var creator: String
    public var createdAt: Date

    public init(team: String, name: String, template: String, creator: String, createdAt: Date) {
        self.team = team
        self.name = name
        self.template = template
        self.creator = creator
        self.createdAt = createdAt
    }
}

/// The team's admin role, given to a user here by an admin (`/admin grant`), besides the
/// platform's own admins and the operator's list (docs/admin.md). Per platform and team: a
/// team's id means something only on its platform.
public struct AdminGrant: Sendable, Hashable, Codable {
    public var platform: String
    public var team: String
    /// The platform's id of the user.
    public var user: String
    /// How they were named when granted (`@ann`), for `/admin` to show.
    public var userName: String
    /// The id of the admin who granted it.
    public var grantedBy: String
    public var grantedAt: Date

    public init(platform: String, team: String, user: String, userName: String, grantedBy: String, grantedAt: Date) {
        self.platform = platform
        self.team = team
        self.user = user
        self.userName = userName
        self.grantedBy = grantedBy
        self.grantedAt = grantedAt
    }
}

/// Whose settings: one user in a team, or one channel.
public enum SettingsScope: Sendable, Hashable {
    case user(team: String, user: String)
    case channel(team: String, channel: String)
    /// What a team sets for itself on a platform (its budget): a team's id means something only
    /// on its platform.
    case team(platform: String, team: String)
}

/// What run history keeps.
public enum Retention: String, Sendable, Hashable, Codable, CaseIterable {
    /// Command line and result text are kept.
    case full
    /// Only the command name, scores and timing; no user or model text.
    case metadata
    /// Nothing is recorded.
    case off

    /// The stricter of two retentions (privacy wins).
    public func stricter(_ other: Retention) -> Retention {
        let order: [Retention] = [.full, .metadata, .off]
        return order.firstIndex(of: self)! >= order.firstIndex(of: other)! ? self : other
    }
}

/// Settings for one scope; nil means "not set here".
public struct Settings: Sendable, Hashable, Codable {
    /// Default translation language, as an ISO 639-1 code.
    public var lang: String?
    public var tier: Tier?
    public var retention: Retention?
    /// What a voice note sent with no command gets (`/settings voice`).
    public var voice: VoiceAction?
    /// Whether a reply's footer shows what its model calls used (`/settings receipts on`).
    public var receipts: Bool?
    /// The team's monthly budget in US dollars (`/admin budget 20`), in the team's scope only;
    /// nil: the operator's default (`BUDGET_MONTHLY_USD`).
    public var budget: Double?

    public init(
        lang: String? = nil, tier: Tier? = nil, retention: Retention? = nil, voice: VoiceAction? = nil, receipts: Bool? = nil, budget: Double? = nil
    ) {
        self.lang = lang
        self.tier = tier
        self.retention = retention
        self.voice = voice
        self.receipts = receipts
        self.budget = budget
    }

    public var isEmpty: Bool { lang == nil && tier == nil && retention == nil && voice == nil && receipts == nil && budget == nil }
}

/// What a voice note sent with no command gets: its transcript (the default), an answer to it
/// as a prompt (`/ai`), or a fact-check of what it says (`/tribunal`).
public enum VoiceAction: String, Sendable, Hashable, Codable, CaseIterable {
    case transcript, ai, tribunal

    /// The command line such a voice note runs.
    public var commandLine: String {
        switch self {
        case .transcript: "/transcribe"
        case .ai: "/ai"
        case .tribunal: "/tribunal"
        }
    }

    /// The command such a voice note runs, typed: what `commandLine` reads as.
    public var command: Command {
        switch self {
        case .transcript: Command(kind: .transcribe)
        case .ai: Command(kind: .action(.freeform))
        case .tribunal: Command(kind: .tribunal)
        }
    }
}

/// One finished run, as `/history` shows it.
public struct HistoryEntry: Sendable, Hashable, Codable {
    public var team: String
    public var user: String
    public var channel: String
    /// The command name (`translate`, `tribunal`, `run polish`…), always kept.
    public var command: String
    /// The full command line; nil when retention is `metadata`.
    public var commandLine: String?
    /// The result text; nil when retention is `metadata`.
    public var resultText: String?
    /// Whether the run succeeded.
    public var succeeded: Bool
    /// A consensus's score, 0…1; what it means is `scoreMeaning`.
    public var agreement: Double?
    public var modelsAnswered: Int?
    public var modelsAsked: Int?
    /// Seconds.
    public var elapsed: Double
    public var createdAt: Date
    /// The consensus's verdict, what its score means, and how many answering models gave the
    /// verdict: so `/history` words a score as the reply did. Nil in rows written before they
    /// were kept (the score is then shown as a bare percentage).
    public var verdict: Verdict?
    public var scoreMeaning: ScoreMeaning?
    public var agreeing: Int?
    /// Why a run that did not succeed failed: the backend's failure (`TribunalError.label`:
    /// `timed_out`, `unreachable`, `rate_limited`…), else `refused` (the run itself refused to go
    /// on: a chain's limit, a gate). Nil for a run that succeeded, and in rows written before it
    /// was kept.
    public var failure: String?

    public init(
        team: String, user: String, channel: String, command: String, commandLine: String?,
        resultText: String?, succeeded: Bool, agreement: Double? = nil, modelsAnswered: Int? = nil,
        modelsAsked: Int? = nil, elapsed: Double, createdAt: Date, verdict: Verdict? = nil, scoreMeaning: ScoreMeaning? = nil,
        agreeing: Int? = nil, failure: String? = nil
    ) {
        self.failure = failure
        self.team = team
        self.user = user
        self.channel = channel
        self.command = command
        self.commandLine = commandLine
        self.resultText = resultText
        self.succeeded = succeeded
        self.agreement = agreement
        self.modelsAnswered = modelsAnswered
        self.modelsAsked = modelsAsked
        self.verdict = verdict
        self.scoreMeaning = scoreMeaning
        self.agreeing = agreeing
        self.elapsed = elapsed
        self.createdAt = createdAt
    }
}

/// Where a recorded consensus was asked.
public enum LedgerOrigin: String, Sendable, Hashable, Codable, CaseIterable {
    /// `/tribunal` (typed, or replying to a message).
    case tribunal
    /// The configured reaction on a message (group fact-checking).
    case reaction
    /// A chain's `verify` gate.
    case verify
    /// The served Rhea API's `/tribunal` or `/dialog`.
    case api
}

/// One asked model's part in a recorded consensus.
public struct LedgerJudge: Sendable, Hashable, Codable {
    public var model: String
    public var verdict: Verdict?
    /// The confidence the model stated, 0…1, when it stated one.
    public var confidence: Double?
    /// Its answer; nil when it failed, or when retention keeps no texts.
    public var answer: String?
    /// Seconds it took, when known.
    public var latency: Double?
    /// Why it gave no answer, in words safe to show.
    public var error: String?

    public init(model: String, verdict: Verdict? = nil, confidence: Double? = nil, answer: String? = nil, latency: Double? = nil, error: String? = nil) {
        self.model = model
        self.verdict = verdict
        self.confidence = confidence
        self.answer = answer
        self.latency = latency
        self.error = error
    }
}

/// A person's word on what the right verdict was (`/ledger mark ID true|false|partly`).
public struct LedgerMark: Sendable, Hashable, Codable {
    public var verdict: Verdict
    public var user: String
    public var markedAt: Date

    public init(verdict: Verdict, user: String, markedAt: Date) {
        self.verdict = verdict
        self.user = user
        self.markedAt = markedAt
    }
}

/// What the council checks of a ledger entry before learning again (`LedgerStore.ledgerStamps`):
/// whether it is new, which backend judged it and its mark, without its texts or votes.
public struct LedgerStamp: Sendable, Hashable {
    public var id: Int64
    public var backend: String
    public var mark: Verdict?

    public init(id: Int64, backend: String, mark: Verdict?) {
        self.id = id
        self.backend = backend
        self.mark = mark
    }

    /// The stamp of `entry`.
    public init(_ entry: LedgerEntry) {
        self.init(id: entry.id, backend: entry.backend, mark: entry.mark?.verdict)
    }
}

/// One recorded consensus: the team's fact-check ledger, and what the council learns from.
public struct LedgerEntry: Sendable, Hashable, Codable {
    /// The store's id, growing and never reused; 0 before it is recorded.
    public var id: Int64
    public var team: String
    /// Who asked.
    public var user: String
    public var channel: String
    public var origin: LedgerOrigin
    /// The claim judged; nil when retention keeps no texts.
    public var claim: String?
    /// The consensus answer; nil when retention keeps no texts.
    public var answer: String?
    public var verdict: Verdict?
    /// The number the reply showed, 0…1 (what it means: `scoreMeaning`).
    public var score: Double
    public var scoreMeaning: ScoreMeaning
    public var answered: Int
    public var asked: Int
    /// Every asked model, in the order asked.
    public var judges: [LedgerJudge]
    /// Which backend judged (`council`, `rhea`).
    public var backend: String
    /// The version of the prompts the judges were given, when the backend says.
    public var promptsVersion: String?
    public var createdAt: Date
    public var mark: LedgerMark?

    public init(
        id: Int64 = 0, team: String, user: String, channel: String, origin: LedgerOrigin, claim: String?, answer: String?,
        verdict: Verdict?, score: Double, scoreMeaning: ScoreMeaning = .agreement, answered: Int, asked: Int,
        judges: [LedgerJudge], backend: String, promptsVersion: String? = nil, createdAt: Date, mark: LedgerMark? = nil
    ) {
        self.id = id
        self.team = team
        self.user = user
        self.channel = channel
        self.origin = origin
        self.claim = claim
        self.answer = answer
        self.verdict = verdict
        self.score = score
        self.scoreMeaning = scoreMeaning
        self.answered = answered
        self.asked = asked
        self.judges = judges
        self.backend = backend
        self.promptsVersion = promptsVersion
        self.createdAt = createdAt
        self.mark = mark
    }

    /// The entry for a consensus, keeping its texts only when `keepTexts` (retention `full`).
    public init(
        _ result: ConsensusResult, claim: String, team: String, user: String, channel: String, origin: LedgerOrigin,
        keepTexts: Bool, createdAt: Date
    ) {
        self.init(
            team: team, user: user, channel: channel, origin: origin, claim: keepTexts ? claim : nil,
            answer: keepTexts ? result.answer : nil, verdict: result.verdict, score: result.agreement,
            scoreMeaning: result.scoreMeaning, answered: result.answered, asked: result.asked,
            judges: result.judges.map { judge in
                LedgerJudge(
                    model: judge.model, verdict: judge.verdict, confidence: judge.confidence,
                    answer: keepTexts && !judge.answer.isEmpty ? judge.answer : nil, latency: judge.latency?.seconds, error: judge.error)
            },
            backend: result.backend, promptsVersion: result.promptsVersion, createdAt: createdAt)
    }

    /// The same entry without any user or model text (retention `metadata`).
    public var withoutTexts: LedgerEntry {
        var copy = self
        copy.claim = nil
        copy.answer = nil
        copy.judges = judges.map { judge in
            var judge = judge
            judge.answer = nil
            return judge
        }
        return copy
    }
}

extension LedgerEntry {
    /// The entry as every store keeps it: numbers that are not finite are dropped (a score
    /// becomes 0), scores and confidences are held to 0…1, counts to at least 0 — so what comes
    /// back reads the same from SQLite and from memory, and JSON never meets a NaN.
    public var storable: LedgerEntry {
        var copy = self
        copy.score = copy.score.isFinite ? min(max(copy.score, 0), 1) : 0
        copy.answered = max(copy.answered, 0)
        copy.asked = max(copy.asked, 0)
        copy.judges = judges.map { judge in
            var judge = judge
            judge.confidence = judge.confidence.flatMap { $0.isFinite ? min(max($0, 0), 1) : nil }
            judge.latency = judge.latency.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            return judge
        }
        return copy
    }
}

/// How a reply names its fact-check, so that a 👍 or 👎 on it marks the right entry: the
/// summary line ends with `fact-check #12`, which platforms keep in the message's own text.
public enum LedgerReference {
    /// `fact-check #12`.
    public static func label(_ id: Int64) -> String { "fact-check #\(id)" }

    /// The fact-check a message's text names (its last `fact-check #N`), or nil.
    public static func id(in text: String) -> Int64? {
        guard let range = text.range(of: "fact-check #", options: .backwards) else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 18, let id = Int64(digits), id > 0 else { return nil }
        return id
    }

    /// The command a 👍 (`right`) or 👎 (`wrong`) on a fact-check's reply stands for.
    public static func markCommand(_ id: Int64, right: Bool) -> String { "/ledger mark \(id) \(right ? "right" : "wrong")" }

    /// Whether a Unicode reaction says a fact-check's verdict was right (👍) or wrong (👎), any
    /// skin tone or variation selector included; nil for other emoji.
    public static func mark(fromEmoji emoji: String) -> Bool? {
        let base = String(
            String.UnicodeScalarView(emoji.unicodeScalars.filter { !(0xFE00...0xFE0F).contains($0.value) && !(0x1F3FB...0x1F3FF).contains($0.value) }))
        switch base {
        case "👍": return true
        case "👎": return false
        default: return nil
        }
    }
}
