/// What one model call used: tokens in and out, what they cost, how long it took.
///
/// Every call that answered is counted, whoever's backend it went to (docs/admin.md, "Usage"):
/// the backend's own count where it gives one (`usage` of an OpenAI-compatible answer, the last
/// chunk of a stream included), otherwise an estimate (`estimated`) from the text's length, so
/// a team's month is never empty because a server does not count.
public struct ModelUsage: Sendable, Hashable, Codable {
    /// The model's name as the reply shows it (the council's name for it, or the gateway's).
    public var model: String
    public var tokensIn: Int
    public var tokensOut: Int
    /// Whether a count is an estimate rather than the backend's.
    public var estimated: Bool
    /// US dollars, from the model's configured price; nil when it has none ("no price").
    public var cost: Double?
    /// Wall time of the call.
    public var elapsed: Duration

    public init(model: String, tokensIn: Int, tokensOut: Int, estimated: Bool, cost: Double? = nil, elapsed: Duration) {
        self.model = model
        self.tokensIn = tokensIn
        self.tokensOut = tokensOut
        self.estimated = estimated
        self.cost = cost
        self.elapsed = elapsed
    }

    public var tokens: Int { tokensIn + tokensOut }

    /// The most tokens one call is believed to use, in or out: a backend's count past it is a
    /// broken or hostile server's, read as none (then estimated), so no sum of counts can overflow.
    public static let plausibleTokens = 0...10_000_000

    /// A call's usage from what the backend reported, each count estimated where it reported
    /// none: `prompt` is every text sent, `answer` the text that came back.
    public static func counted(
        model: String, reportedIn: Int?, reportedOut: Int?, prompt: [String], answer: String, price: ModelPrice?, elapsed: Duration
    ) -> ModelUsage {
        let tokensIn = reportedIn ?? TokenEstimate.prompt(prompt)
        let tokensOut = reportedOut ?? TokenEstimate.text(answer)
        return ModelUsage(
            model: model, tokensIn: tokensIn, tokensOut: tokensOut, estimated: reportedIn == nil || reportedOut == nil,
            cost: price?.cost(tokensIn: tokensIn, tokensOut: tokensOut), elapsed: elapsed)
    }
}

extension [ModelUsage] {
    /// Tokens in and out of every call.
    public var tokens: Int { reduce(0) { $0 + $1.tokens } }
    /// What the calls cost; nil when none of them has a price.
    public var cost: Double? {
        let priced = compactMap(\.cost)
        return priced.isEmpty ? nil : priced.reduce(0, +)
    }
    public var anyEstimated: Bool { contains(where: \.estimated) }
}

/// A model's price, in US dollars per million tokens (`COUNCIL_<M>_PRICE_IN`/`_OUT`).
public struct ModelPrice: Sendable, Hashable, Codable {
    public var inPerMillion: Double
    public var outPerMillion: Double

    public init(inPerMillion: Double, outPerMillion: Double) {
        self.inPerMillion = inPerMillion
        self.outPerMillion = outPerMillion
    }

    public func cost(tokensIn: Int, tokensOut: Int) -> Double {
        (Double(tokensIn) * inPerMillion + Double(tokensOut) * outPerMillion) / 1_000_000
    }
}

/// Tokens guessed from text where a backend counts none: about four bytes of UTF-8 a token,
/// as the providers' own rule of thumb for English says, and a few a message for its framing.
/// Marked as an estimate wherever it is shown.
public enum TokenEstimate {
    public static func text(_ text: String) -> Int {
        text.isEmpty ? 0 : (text.utf8.count + 3) / 4
    }

    public static func prompt(_ messages: [String]) -> Int {
        messages.reduce(0) { $0 + text($1) + 4 }
    }
}
