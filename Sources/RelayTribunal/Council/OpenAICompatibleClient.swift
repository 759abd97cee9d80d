public import AsyncHTTPClient
import Foundation
public import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import RelayCore
public import RelayHTTP

/// One chat-completion call to any OpenAI-compatible endpoint (OpenAI, OpenRouter, Ollama,
/// llama.cpp server, vLLM).
///
/// There are no retries here: when a model fails, the council asks the next one, and it needs
/// to know at once. Cancelling the calling task aborts the HTTP request. It sends through the
/// relay's shared `HTTPTransport` (no redirects: they would carry the key elsewhere).
public struct OpenAICompatibleClient: Sendable {
    /// Largest answer body read; a 512-token answer is a few kilobytes.
    static let maxResponseBytes = 4 * 1024 * 1024

    let transport: HTTPTransport
    let logger: Logger

    /// Creates a client on the shared transport (whose `HTTPClient` the caller owns).
    public init(transport: HTTPTransport, logger: Logger) {
        self.transport = transport
        var logger = logger
        logger[metadataKey: "tribunal.backend"] = "council"
        self.logger = logger
    }

    /// Asks `model` once and returns `choices[0].message.content`, trimmed.
    ///
    /// - Parameters:
    ///   - timeout: the whole exchange, reading the answer included.
    /// - Throws: a `ModelCallError`; `.cancelled` when the calling task was cancelled.
    public func complete(
        _ model: CouncilModel,
        messages: [ChatMessage],
        temperature: Double = 0.3,
        maxTokens: Int = 512,
        timeout: Duration
    ) async throws(ModelCallError) -> ChatCompletion {
        let request = try Self.request(model: model, messages: messages, temperature: temperature, maxTokens: maxTokens, stream: false)

        let started = ContinuousClock.now
        let response: HTTPAnswer
        do {
            response = try await exchange(request, timeout: timeout)
        } catch {
            logger.debug(
                "Council model call failed",
                metadata: ["council.model": "\(model.name)", "council.error": "\(error.reason)", "council.elapsed": "\(started.duration(to: .now))"])
            throw error
        }
        let elapsed = response.elapsed
        logger.debug(
            "Council model answered",
            metadata: ["council.model": "\(model.name)", "council.status": "\(response.status)", "council.elapsed": "\(elapsed)"])

        guard response.isSuccess else {
            let detail = OpenAIErrorDetail.readable(from: response.body, status: response.status, apiKey: model.apiKey)
            throw Self.error(status: response.status, retryAfter: response.retryAfter(), detail: detail)
        }
        switch OpenAIWire.answer(from: response.body) {
        case .text(let text, let answeredModel, let usage):
            return ChatCompletion(
                text: text, model: answeredModel, elapsed: elapsed,
                usage: Self.usage(of: model, messages: messages, answer: text, reported: usage, elapsed: elapsed))
        case .embeddedError(let message, let code):
            // Map the provider's code as if it had been the status; otherwise a bad gateway.
            let status = code.flatMap { (400...599).contains($0) ? $0 : nil } ?? 502
            throw Self.error(
                status: status, retryAfter: nil, detail: OpenAIErrorDetail.clean(message, apiKey: model.apiKey))
        case .malformed(let reason):
            throw .malformed(reason: reason)
        }
    }

    /// A call's usage: what the server counted, an estimate for what it did not.
    static func usage(of model: CouncilModel, messages: [ChatMessage], answer: String, reported: OpenAIWire.Usage?, elapsed: Duration) -> ModelUsage {
        .counted(
            model: model.name, reportedIn: reported?.promptTokens, reportedOut: reported?.completionTokens, prompt: messages.map(\.content),
            answer: answer, price: model.price, elapsed: elapsed)
    }

    /// `{baseURL}/chat/completions`, without doubling a trailing slash.
    static func endpoint(baseURL: String, path: String = "/chat/completions") -> String {
        var base = baseURL.trimmingWhitespace
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }

    /// `GET {baseURL}/models`, with the key when there is one: what every OpenAI-compatible
    /// server answers, to learn whether it is there, takes the key, and what it serves.
    public static func modelsRequest(baseURL: String, apiKey: String? = nil) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: endpoint(baseURL: baseURL, path: "/models"))
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        authorize(&request, apiKey: apiKey)
        return request
    }

    /// The key goes into this header only; nothing logs headers.
    private static func authorize(_ request: inout HTTPClientRequest, apiKey: String?) {
        if let key = apiKey?.trimmingWhitespace, !key.isEmpty {
            request.headers.add(name: "Authorization", value: "Bearer \(key)")
        }
    }

    static func request(
        model: CouncilModel, messages: [ChatMessage], temperature: Double, maxTokens: Int, stream: Bool
    ) throws(ModelCallError) -> HTTPClientRequest {
        let url = endpoint(baseURL: model.baseURL)
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            throw .unreachable(reason: "base URL is not an http(s) URL")
        }
        let body = OpenAIWire.ChatRequest(
            model: model.model, messages: messages, temperature: temperature, maxTokens: maxTokens, stream: stream)
        let bytes: Data
        do {
            bytes = try JSONEncoder().encode(body)
        } catch {
            // Only a non-finite temperature gets here.
            throw .rejected(status: 0, detail: "the request could not be encoded as JSON")
        }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: stream ? "text/event-stream" : "application/json")
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        authorize(&request, apiKey: model.apiKey)
        request.body = .bytes(ByteBuffer(data: bytes))
        return request
    }
}
