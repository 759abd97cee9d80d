public import RelayCore

/// How a `FakeOpenAIServer` answers, decided from the last user message of each request.
///
/// Verdict personas answer the council's JSON shape
/// `{"verdict":"true|false|partly|unverifiable","confidence":0..1,"answer":"…"}`, with
/// `answer` = a one-word stance ("Yes.", "No.", "Partly.", "Unclear.") and the first 60
/// characters of the last user message.
public indirect enum FakeOpenAIPersona: Sendable, Hashable {
    /// `{"verdict":"true","confidence":0.9,"answer":"Yes. <message prefix>"}`.
    case agree
    /// `{"verdict":"false","confidence":0.8,"answer":"No. <message prefix>"}`.
    case disagree
    /// `{"verdict":"partly","confidence":0.6,"answer":"Partly. <message prefix>"}`.
    case partly
    /// Exactly this verdict JSON.
    case verdict(Verdict, confidence: Double, answer: String)
    /// The verdict JSON in a fenced block inside chatty prose, as small models like to answer.
    case jsonInProse(Verdict, confidence: Double)
    /// This text as the content, with no JSON at all.
    case prose(String)
    /// These pieces joined as the content; streamed (`"stream": true`), exactly these pieces,
    /// one a chunk — to split a mention or an escape across chunks.
    case pieces([String])
    /// Content that starts like the verdict JSON and breaks off: `{"verdict": "true", "confidence": `.
    case malformedJSON
    /// Content `"[<requested model id>] <last user message>"`: shows which model got which prompt.
    case echo
    /// Waits `seconds` (the server can still stop meanwhile), then answers as `then`.
    case slow(seconds: Double, then: FakeOpenAIPersona)
    /// Never answers in any useful time (600 s); the client has to give up.
    case hang
    /// HTTP `status` with OpenAI's error body `{"error":{"message","type","code"}}`;
    /// a 429 also carries `Retry-After: 1`.
    case fail(status: Int, message: String)
    /// HTTP 200 whose body is not JSON.
    case malformedBody
    /// Like a model that does what it is told: a request whose system message asks for a JSON
    /// `"verdict"` (a council judge's) is answered as `verdicts`; any other request (a quick
    /// action, the chairman) as `.echo`. Lets one server serve chains and verify gates alike.
    case judging(FakeOpenAIPersona)
    /// The n-th chat request (counted from start or the last `setPersona`) uses the n-th
    /// persona; the last one repeats.
    case sequence([FakeOpenAIPersona])
}

extension FakeOpenAIPersona {
    /// How many characters of the user message the verdict personas quote.
    static let quotedPrefix = 60

    /// The verdict JSON exactly as the verdict personas send it (keys in reading order).
    public static func verdictJSON(_ verdict: Verdict, confidence: Double, answer: String) -> String {
        let confidenceText = String(decoding: JSONValue.double(confidence).encoded(), as: UTF8.self)
        let answerText = String(decoding: JSONValue.string(answer).encoded(), as: UTF8.self)
        return #"{"verdict":"\#(verdict.rawValue)","confidence":\#(confidenceText),"answer":\#(answerText)}"#
    }

    /// The answer the verdict personas give for `verdict` to `message`.
    static func answer(_ verdict: Verdict, quoting message: String) -> String {
        let stance =
            switch verdict {
            case .true: "Yes."
            case .false: "No."
            case .partly: "Partly."
            case .unverifiable: "Unclear."
            }
        let quoted = String(message.prefix(quotedPrefix))
        return quoted.isEmpty ? stance : "\(stance) \(quoted)"
    }
}
