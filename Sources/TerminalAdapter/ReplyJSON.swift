import Foundation
public import RelayCore

/// One reply as `run --json` prints it: a JSON object for scripts, every field present (null
/// when it does not apply), keys sorted.
///
/// The two scores keep their own names, as the replies word them (docs/terminal.md): `probability`
/// is the probability that the verdict is right (the council that learns from its ledger), and
/// `agreement` the share of the answering models that agree (or, from a backend that scores
/// agreement, its agreement score). Neither is ever the other.
public struct ReplyJSON: Encodable, Sendable {
    public var ok: Bool
    /// `result`, `info` or `error`.
    public var kind: String
    public var title: String?
    /// The answer (or the info text); null when `ok` is false.
    public var text: String?
    /// What failed and how to fix it; null when `ok` is true.
    public var error: String?
    public var verdict: String?
    public var probability: Double?
    public var agreement: Double?
    /// How many answering models gave the verdict, when the backend counts them.
    public var agreeing: Int?
    public var answered: Int?
    public var asked: Int?
    /// The models that answered, in order, where the backend named them.
    public var models: [String]
    public var dissent: [DissentJSON]
    /// The command's wall time, in seconds.
    public var elapsed: Double
    public var notes: [String]
    public var isPrivate: Bool

    public struct DissentJSON: Encodable, Sendable {
        public var model: String
        public var verdict: String?
        public var reason: String
    }

    public init(_ reply: Reply, elapsed: Duration) {
        ok = reply.kind != .error
        kind = reply.kind.rawValue
        title = reply.title
        text = ok ? reply.body : nil
        error = ok ? nil : reply.body
        let footer = reply.footer
        verdict = footer?.verdict?.rawValue
        switch footer?.scoreMeaning {
        case .probabilityRight?:
            probability = footer?.verdict == nil ? nil : footer?.agreement
            agreement = footer.flatMap { f in f.agreeing.map { f.answered == 0 ? 0 : Double($0) / Double(f.answered) } }
        case .agreement?:
            probability = nil
            agreement = footer?.agreement
        case .answeredShare?, nil:
            probability = nil
            agreement = nil
        }
        agreeing = footer?.agreeing
        answered = footer?.answered
        asked = footer?.asked
        models = reply.models ?? []
        dissent = footer?.dissent.map { DissentJSON(model: $0.model, verdict: $0.verdict?.rawValue, reason: $0.reason) } ?? []
        self.elapsed = (elapsed.seconds * 1000).rounded() / 1000
        notes = reply.notes
        isPrivate = reply.isPrivate
    }

    private enum CodingKeys: String, CodingKey {
        case ok, kind, title, text, error, verdict, probability, agreement, agreeing, answered, asked, models, dissent, notes
        case elapsed = "elapsed_seconds"
        case isPrivate = "private"
    }

    // Every key, null where it does not apply: a script reads `.verdict` without asking first
    // whether the key exists.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ok, forKey: .ok)
        try container.encode(kind, forKey: .kind)
        try container.encode(title, forKey: .title)
        try container.encode(text, forKey: .text)
        try container.encode(error, forKey: .error)
        try container.encode(verdict, forKey: .verdict)
        try container.encode(probability, forKey: .probability)
        try container.encode(agreement, forKey: .agreement)
        try container.encode(agreeing, forKey: .agreeing)
        try container.encode(answered, forKey: .answered)
        try container.encode(asked, forKey: .asked)
        try container.encode(models, forKey: .models)
        try container.encode(dissent, forKey: .dissent)
        try container.encode(elapsed, forKey: .elapsed)
        try container.encode(notes, forKey: .notes)
        try container.encode(isPrivate, forKey: .isPrivate)
    }

    /// The object as one line of JSON.
    public var line: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings, numbers and arrays of them cannot fail.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? #"{"ok":false,"error":"the reply could not be encoded"}"#
    }
}
