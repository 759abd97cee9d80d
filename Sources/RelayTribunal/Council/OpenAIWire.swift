import Foundation
import RelayCore

/// The OpenAI chat-completions wire format, as far as the council needs it.
///
/// Servers that call themselves OpenAI-compatible differ in the details (llama.cpp, Ollama,
/// vLLM, OpenRouter), so answers are read leniently: every field is optional, a field of an
/// unexpected type counts as missing, and unknown fields are ignored.
enum OpenAIWire {
    /// `POST {base}/chat/completions` body.
    struct ChatRequest: Encodable {
        var model: String
        var messages: [ChatMessage]
        var temperature: Double
        var maxTokens: Int
        /// True for an answer shown as it is written (`OpenAICompatibleClient.stream`); false
        /// where the whole answer is needed before anything is done with it (a verdict).
        var stream = false

        enum CodingKeys: String, CodingKey {
            case model, messages, temperature, stream
            case maxTokens = "max_tokens"
            case streamOptions = "stream_options"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(model, forKey: .model)
            try container.encode(messages, forKey: .messages)
            try container.encode(temperature, forKey: .temperature)
            try container.encode(maxTokens, forKey: .maxTokens)
            try container.encode(stream, forKey: .stream)
            // A stream counts its tokens only when asked: the count comes in a last chunk
            // with no choices (OpenAI, vLLM); servers that do not know it ignore it.
            if stream { try container.encode(["include_usage": true], forKey: .streamOptions) }
        }
    }

    /// `usage`: what the server counted. Either count may be missing (some servers send only a
    /// total, which says nothing of the split and is not read).
    struct Usage: Decodable {
        var promptTokens: Int?
        var completionTokens: Int?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let plausible = ModelUsage.plausibleTokens
            promptTokens = UntrustedNumber.checked(
                container.lenient(Int.self, forKey: .promptTokens), in: plausible, source: "council", field: "usage.prompt_tokens")
            completionTokens = UntrustedNumber.checked(
                container.lenient(Int.self, forKey: .completionTokens), in: plausible, source: "council", field: "usage.completion_tokens")
        }

        enum CodingKeys: String, CodingKey {
            case promptTokens = "prompt_tokens"
            case completionTokens = "completion_tokens"
        }
    }

    /// The parts of a chat completion that are read.
    struct ChatResponse: Decodable {
        var model: String?
        var choices: [Choice]?
        /// OpenRouter can answer 200 with an error object instead of choices.
        var error: ErrorObject?
        var usage: Usage?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            model = container.lenient(String.self, forKey: .model)
            choices = container.lenient([Choice].self, forKey: .choices)
            error = container.lenient(ErrorObject.self, forKey: .error)
            usage = container.lenient(Usage.self, forKey: .usage)
        }

        enum CodingKeys: String, CodingKey { case model, choices, error, usage }
    }

    struct Choice: Decodable {
        var message: Message?
        /// The legacy completions shape, still sent by some older servers.
        var text: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            message = container.lenient(Message.self, forKey: .message)
            text = container.lenient(String.self, forKey: .text)
        }

        enum CodingKeys: String, CodingKey { case message, text }
    }

    struct Message: Decodable {
        var content: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let text = container.lenient(String.self, forKey: .content) {
                content = text
            } else if let parts = container.lenient([ContentPart].self, forKey: .content) {
                // Some servers send content as parts: [{"type": "text", "text": "…"}].
                content = parts.compactMap(\.text).joined()
            }
        }

        enum CodingKeys: String, CodingKey { case content }
    }

    struct ContentPart: Decodable {
        var text: String?

        init(from decoder: any Decoder) throws {
            text = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .text)
        }

        enum CodingKeys: String, CodingKey { case text }
    }

    /// `{"error": {"message": …, "type": …, "code": …}}`; `code` may be a string or a number.
    struct ErrorObject: Decodable {
        var message: String?
        var code: Int?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            message = container.lenient(String.self, forKey: .message)
            code =
                container.lenient(Int.self, forKey: .code)
                ?? container.lenient(String.self, forKey: .code).flatMap { Int($0) }
        }

        enum CodingKeys: String, CodingKey { case message, code }
    }

    /// One `data:` event of a streamed chat completion: a piece of the answer in
    /// `choices[0].delta.content`, `finish_reason` on the last, an error object in its place when
    /// the server fails midway, and usage alone (no choices) where the server sends it.
    struct StreamChunk: Decodable {
        var model: String?
        var choices: [StreamChoice]?
        var error: ErrorObject?
        var usage: Usage?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            model = container.lenient(String.self, forKey: .model)
            choices = container.lenient([StreamChoice].self, forKey: .choices)
            error = container.lenient(ErrorObject.self, forKey: .error)
            usage = container.lenient(Usage.self, forKey: .usage)
        }

        enum CodingKeys: String, CodingKey { case model, choices, error, usage }
    }

    struct StreamChoice: Decodable {
        var delta: Message?
        /// The legacy completions shape.
        var text: String?
        var finishReason: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            delta = container.lenient(Message.self, forKey: .delta)
            text = container.lenient(String.self, forKey: .text)
            finishReason = container.lenient(String.self, forKey: .finishReason)
        }

        enum CodingKeys: String, CodingKey {
            case delta, text
            case finishReason = "finish_reason"
        }
    }

    /// The answer text and the model that gave it, or why the body is not an answer.
    enum Answer {
        case text(String, model: String?, usage: Usage?)
        /// A 200 that carries an error object and no choices.
        case embeddedError(message: String, code: Int?)
        case malformed(reason: String)
    }

    static func answer(from body: [UInt8]) -> Answer {
        guard let response = try? JSONDecoder().decode(ChatResponse.self, from: Data(body)) else {
            return .malformed(reason: "answer is not a JSON object")
        }
        let first = response.choices?.first
        guard let content = first?.message?.content ?? first?.text else {
            if let error = response.error, response.choices?.isEmpty ?? true {
                return .embeddedError(message: error.message ?? "unknown error", code: error.code)
            }
            return .malformed(reason: response.choices == nil ? "no choices in the answer" : "no content in the answer")
        }
        let text = content.trimmingWhitespace
        guard !text.isEmpty else { return .malformed(reason: "empty answer") }
        return .text(text, model: response.model, usage: response.usage)
    }
}

extension KeyedDecodingContainer {
    /// The value at `key`, or nil when it is missing, null or of another type.
    fileprivate func lenient<T: Decodable>(_ type: T.Type, forKey key: Key) -> T? {
        (try? decodeIfPresent(type, forKey: key)) ?? nil
    }
}
