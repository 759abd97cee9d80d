import Foundation
import RelayCore

/// What a `FakeOpenAIServer` sends back for one request, after `delay` seconds.
struct FakeOpenAIReply: Sendable {
    var status: Int
    var body: [UInt8]
    var delay: Double = 0
    /// Seconds for a `Retry-After` header.
    var retryAfter: Int?
    /// A completion's content, and the pieces `.pieces` streams it in.
    var content: String?
    var pieces: [String]?
    /// Set when the request asked for a stream: the body is then these events, not `body`.
    var stream: FakeOpenAIStreamPlan?

    init(status: Int, json: JSONValue) {
        self.status = status
        self.body = json.encoded()
    }

    init(status: Int, bytes: [UInt8]) {
        self.status = status
        self.body = bytes
    }
}

/// The fake's routing and answers, as pure functions of the request and the state.
enum FakeOpenAIReplies {
    static let chatPaths: Set<String> = ["/v1/chat/completions", "/chat/completions"]
    static let modelsPaths: Set<String> = ["/v1/models", "/models"]
    static let transcriptionPaths: Set<String> = ["/v1/audio/transcriptions", "/audio/transcriptions"]
    /// How long `.hang` waits: far beyond any client timeout, short enough to end eventually.
    static let hangSeconds: Double = 600

    /// Order: route, method, key, body validation, persona, as OpenAI checks them.
    static func reply(to request: RecordedRequest, state: FakeOpenAIState) -> FakeOpenAIReply {
        let path =
            request.path.count > 1 && request.path.hasSuffix("/") ? String(request.path.dropLast()) : request.path
        if transcriptionPaths.contains(path) { return transcription(request, state: state) }
        let isChat = chatPaths.contains(path)
        guard isChat || modelsPaths.contains(path) else {
            return error(404, "Invalid URL (\(request.method) \(request.path))")
        }
        guard request.method == (isChat ? "POST" : "GET") else {
            return error(405, "Method \(request.method) not allowed for \(request.path)")
        }
        if let refusal = authRefusal(request, requiredKey: state.requiredKey) {
            return refusal
        }
        guard isChat else { return models(state.modelID) }

        guard let body = request.body?.objectValue else {
            return error(400, "We could not parse the JSON body of your request.")
        }
        guard let model = body["model"]?.stringValue, !model.isEmpty else {
            return error(400, "you must provide a model parameter")
        }
        guard let messages = body["messages"]?.arrayValue, !messages.isEmpty else {
            return error(400, "'messages' must be a non-empty array")
        }
        let texts = messages.map { text(of: $0["content"]) }
        guard messages.allSatisfy({ $0["role"]?.stringValue != nil }), !texts.contains(nil) else {
            return error(400, "each message needs a string 'role' and a 'content'")
        }
        let lastUser = messages.lastIndex { $0["role"]?.stringValue == "user" }.flatMap { texts[$0] } ?? ""
        let asksForVerdict = zip(messages, texts).contains { message, text in
            message["role"]?.stringValue == "system" && (text ?? "").contains(#""verdict""#)
        }
        let next = state.nextChat()
        let chat = Chat(
            model: model, lastUserMessage: lastUser, promptCharacters: texts.reduce(0) { $0 + ($1?.count ?? 0) },
            number: next.number, asksForVerdict: asksForVerdict, reportsUsage: state.reportsUsage)
        var reply = answer(next.persona, index: next.index, chat: chat)
        if body["stream"]?.boolValue == true, reply.status == 200, let content = reply.content {
            // Only when asked, as OpenAI, vLLM and llama.cpp do: `stream_options.include_usage`.
            let asked = body["stream_options"]?["include_usage"]?.boolValue == true
            reply.stream = FakeOpenAIStreamPlan(
                pieces: reply.pieces ?? FakeOpenAIStream.pieces(of: content), model: model, id: "chatcmpl-fake\(chat.number)", style: state.stream,
                promptTokens: chat.promptTokens, includeUsage: asked && chat.reportsUsage)
        }
        return reply
    }

    /// `POST /v1/audio/transcriptions`: the persona decides how (`.hang`, `.slow`, `.fail`,
    /// `.malformedBody`); any other answers `{"text": "…"}` with a fixed sentence. The multipart
    /// body is not parsed: the real speech server's tests check that.
    static func transcription(_ request: RecordedRequest, state: FakeOpenAIState) -> FakeOpenAIReply {
        guard request.method == "POST" else { return error(405, "Method \(request.method) not allowed for \(request.path)") }
        if let refusal = authRefusal(request, requiredKey: state.requiredKey) { return refusal }
        func reply(_ persona: FakeOpenAIPersona) -> FakeOpenAIReply {
            switch persona {
            case .hang:
                var answer = reply(.agree)
                answer.delay = hangSeconds
                return answer
            case .slow(let seconds, let then):
                var answer = reply(then)
                answer.delay += max(0, seconds)
                return answer
            case .fail(let status, let message):
                var answer = error(status, message)
                if status == 429 { answer.retryAfter = 1 }
                return answer
            case .malformedBody:
                return FakeOpenAIReply(status: 200, bytes: Array("upstream said: this is not JSON".utf8))
            default:
                return FakeOpenAIReply(status: 200, json: ["text": " The fake heard a voice note."])
            }
        }
        return reply(state.nextChat().persona)
    }

    /// What a persona needs to know about the request.
    struct Chat {
        var model: String
        var lastUserMessage: String
        var promptCharacters: Int
        var number: Int
        /// A system message asks for the JSON `"verdict"` shape.
        var asksForVerdict: Bool
        var reportsUsage: Bool

        /// Rough, as the answers' counts: 4 characters a token.
        var promptTokens: Int { max(1, promptCharacters / 4) }
    }

    static func answer(_ persona: FakeOpenAIPersona, index: Int, chat: Chat) -> FakeOpenAIReply {
        let message = chat.lastUserMessage
        switch persona {
        case .agree:
            return verdict(.true, 0.9, FakeOpenAIPersona.answer(.true, quoting: message), chat)
        case .disagree:
            return verdict(.false, 0.8, FakeOpenAIPersona.answer(.false, quoting: message), chat)
        case .partly:
            return verdict(.partly, 0.6, FakeOpenAIPersona.answer(.partly, quoting: message), chat)
        case .verdict(let value, let confidence, let answer):
            return verdict(value, confidence, answer, chat)
        case .jsonInProse(let value, let confidence):
            let json = FakeOpenAIPersona.verdictJSON(
                value, confidence: confidence, answer: FakeOpenAIPersona.answer(value, quoting: message))
            return completion("Sure! Here is my judgement:\n```json\n\(json)\n```\nHope this helps.", chat)
        case .prose(let text):
            return completion(text, chat)
        case .pieces(let pieces):
            var reply = completion(pieces.joined(), chat)
            reply.pieces = pieces
            return reply
        case .malformedJSON:
            return completion(#"{"verdict": "true", "confidence": "#, chat)
        case .echo:
            return completion("[\(chat.model)] \(message)", chat)
        case .slow(let seconds, let then):
            var reply = answer(then, index: index, chat: chat)
            reply.delay += max(0, seconds)
            return reply
        case .hang:
            var reply = answer(.agree, index: index, chat: chat)
            reply.delay = hangSeconds
            return reply
        case .fail(let status, let message):
            var reply = error(status, message)
            if status == 429 { reply.retryAfter = 1 }
            return reply
        case .malformedBody:
            return FakeOpenAIReply(status: 200, bytes: Array("upstream said: this is not JSON".utf8))
        case .judging(let verdicts):
            return answer(chat.asksForVerdict ? verdicts : .echo, index: index, chat: chat)
        case .sequence(let personas):
            guard let last = personas.last else { return answer(.agree, index: index, chat: chat) }
            return answer(index < personas.count ? personas[index] : last, index: index, chat: chat)
        }
    }

    private static func verdict(_ value: Verdict, _ confidence: Double, _ answer: String, _ chat: Chat)
        -> FakeOpenAIReply
    {
        completion(FakeOpenAIPersona.verdictJSON(value, confidence: confidence, answer: answer), chat)
    }

    /// The real `chat.completion` shape; token counts are rough (4 characters a token).
    static func completion(_ content: String, _ chat: Chat) -> FakeOpenAIReply {
        let promptTokens = chat.promptTokens
        let completionTokens = max(1, content.count / 4)
        var json: [String: JSONValue] = [
            "id": .string("chatcmpl-fake\(chat.number)"),
            "object": "chat.completion",
            "created": .int(Int(Date().timeIntervalSince1970)),
            "model": .string(chat.model),
            "choices": [
                [
                    "index": 0, "message": ["role": "assistant", "content": .string(content)],
                    "logprobs": nil, "finish_reason": "stop",
                ]
            ],
            "system_fingerprint": "fp_fake",
        ]
        if chat.reportsUsage {
            json["usage"] = [
                "prompt_tokens": .int(promptTokens), "completion_tokens": .int(completionTokens),
                "total_tokens": .int(promptTokens + completionTokens),
            ]
        }
        var reply = FakeOpenAIReply(status: 200, json: .object(json))
        reply.content = content
        return reply
    }

    static func models(_ modelID: String) -> FakeOpenAIReply {
        FakeOpenAIReply(
            status: 200,
            json: [
                "object": "list",
                "data": [["id": .string(modelID), "object": "model", "created": 1_700_000_000, "owned_by": "fake"]],
            ])
    }

    /// OpenAI's error body: `{"error": {"message", "type", "param", "code"}}`.
    static func error(_ status: Int, _ message: String) -> FakeOpenAIReply {
        let (type, code): (String, JSONValue) =
            switch status {
            case 401: ("invalid_request_error", "invalid_api_key")
            case 403: ("permission_error", nil)
            case 404: ("invalid_request_error", "model_not_found")
            case 429: ("requests", "rate_limit_exceeded")
            case 500...: ("server_error", nil)
            default: ("invalid_request_error", nil)
            }
        return FakeOpenAIReply(
            status: status,
            json: ["error": ["message": .string(message), "type": .string(type), "param": nil, "code": code]])
    }

    /// A 401 when a key is required and the Bearer token is missing or wrong.
    static func authRefusal(_ request: RecordedRequest, requiredKey: String?) -> FakeOpenAIReply? {
        guard let requiredKey else { return nil }
        let header = request.header("authorization") ?? ""
        guard header != "Bearer \(requiredKey)" else { return nil }
        let given = header.hasPrefix("Bearer ") ? String(header.dropFirst("Bearer ".count)) : ""
        // OpenAI echoes a masked form of the wrong key; clients must not pass it on.
        let shown = given.isEmpty ? "" : ": \(masked(given))"
        return error(
            401,
            "Incorrect API key provided\(shown). You can find your API key at https://platform.openai.com/account/api-keys."
        )
    }

    static func masked(_ key: String) -> String {
        guard key.count > 8 else { return "***" }
        return "\(key.prefix(3))\(String(repeating: "*", count: key.count - 7))\(key.suffix(4))"
    }

    /// A message's text: a string, or the `text` of its parts.
    private static func text(of content: JSONValue?) -> String? {
        if let text = content?.stringValue { return text }
        guard let parts = content?.arrayValue else { return nil }
        return parts.compactMap { $0["text"]?.stringValue }.joined()
    }
}
