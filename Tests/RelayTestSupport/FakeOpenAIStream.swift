import Foundation
import RelayCore

/// How a `FakeOpenAIServer` streams an answer asked for with `"stream": true`: server-sent events
/// of `chat.completion.chunk`s, one piece of the answer each, then a chunk with `finish_reason`,
/// a usage chunk and `data: [DONE]` — with whatever a test wants to go wrong on the way.
public struct FakeOpenAIStream: Sendable, Hashable {
    /// Pieces sent a second (the first goes at once).
    public var piecesPerSecond: Double
    /// After this many pieces, the stream stalls for `stallSeconds`.
    public var stallAfter: Int?
    public var stallSeconds: Double
    /// After this many pieces the connection drops: no `finish_reason`, no `[DONE]`.
    public var disconnectAfter: Int?
    /// After every this many pieces, an event that is not JSON.
    public var malformedEvery: Int?
    /// Whether the stream ends with `finish_reason` and `data: [DONE]` (false: it just ends).
    public var ends: Bool

    public init(
        piecesPerSecond: Double = 1000, stallAfter: Int? = nil, stallSeconds: Double = 0, disconnectAfter: Int? = nil, malformedEvery: Int? = nil,
        ends: Bool = true
    ) {
        self.piecesPerSecond = piecesPerSecond
        self.stallAfter = stallAfter
        self.stallSeconds = stallSeconds
        self.disconnectAfter = disconnectAfter
        self.malformedEvery = malformedEvery
        self.ends = ends
    }

    /// The answer's pieces as a model streams them: words with the spaces before them.
    public static func pieces(of text: String) -> [String] {
        var pieces: [String] = []
        var current = ""
        for character in text {
            if character == " " && !current.isEmpty && current.last != " " {
                pieces.append(current)
                current = ""
            }
            current.append(character)
        }
        if !current.isEmpty { pieces.append(current) }
        return pieces
    }
}

/// One streamed answer: what to send, and how.
struct FakeOpenAIStreamPlan: Sendable {
    var pieces: [String]
    var model: String
    var id: String
    var style: FakeOpenAIStream
    var promptTokens = 1
    /// Whether a chunk with `usage` and no choices comes before `[DONE]`.
    var includeUsage = true

    /// What happens at each step, in order.
    enum Step: Sendable {
        case wait(seconds: Double)
        /// Text written; `isPiece` when it carries a piece of the answer.
        case send(String, isPiece: Bool = false)
        case disconnect
    }

    var steps: [Step] {
        var steps: [Step] = []
        let gap = piecesPerSecondGap
        for (index, piece) in pieces.enumerated() {
            if index == style.disconnectAfter { return steps + [.disconnect] }
            if index == style.stallAfter { steps.append(.wait(seconds: style.stallSeconds)) }
            if index > 0 { steps.append(.wait(seconds: gap)) }
            steps.append(.send(event(chunk(delta: ["content": .string(piece)], finish: nil)), isPiece: true))
            if let every = style.malformedEvery, every > 0, (index + 1) % every == 0 { steps.append(.send("data: {\"choices\": [{\"delta\"\n\n")) }
        }
        if style.disconnectAfter.map({ $0 >= pieces.count }) == true { return steps + [.disconnect] }
        guard style.ends else { return steps }
        steps.append(.send(event(chunk(delta: [:], finish: "stop"))))
        if includeUsage {
            let tokens = max(1, pieces.joined().count / 4)
            var usage = chunk(delta: nil, finish: nil)
            usage["choices"] = []
            usage["usage"] = ["prompt_tokens": .int(promptTokens), "completion_tokens": .int(tokens), "total_tokens": .int(tokens + promptTokens)]
            steps.append(.send(event(usage)))
        }
        steps.append(.send("data: [DONE]\n\n"))
        return steps
    }

    private var piecesPerSecondGap: Double { style.piecesPerSecond > 0 ? 1 / style.piecesPerSecond : 0 }

    private func chunk(delta: [String: JSONValue]?, finish: String?) -> [String: JSONValue] {
        var choice: [String: JSONValue] = ["index": 0, "finish_reason": finish.map { .string($0) } ?? nil]
        if let delta { choice["delta"] = .object(delta) }
        return [
            "id": .string(id), "object": "chat.completion.chunk", "created": .int(Int(Date().timeIntervalSince1970)), "model": .string(model),
            "choices": [.object(choice)],
        ]
    }

    private func event(_ json: [String: JSONValue]) -> String {
        "data: " + String(decoding: JSONValue.object(json).encoded(), as: UTF8.self) + "\n\n"
    }
}
