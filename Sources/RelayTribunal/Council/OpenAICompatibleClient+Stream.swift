import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import RelayHTTP
import Synchronization

extension OpenAICompatibleClient {
    /// Asks `model` once with `stream: true` and hands `onText` the answer so far (trimmed) each
    /// time a server-sent chunk makes it grow; returns the whole answer.
    ///
    /// The stream is read leniently, as servers differ: a chunk that is not JSON, or has no text,
    /// is passed over, and a stream that ends without `[DONE]` is whole if its last chunk said
    /// why it finished (`finish_reason`). One that ends with neither, or with an error object, or
    /// whose connection drops, throws — after `onText` was handed what had come, which the run
    /// shows as cut off.
    public func stream(
        _ model: CouncilModel,
        messages: [ChatMessage],
        temperature: Double = 0.3,
        maxTokens: Int = 512,
        timeout: Duration,
        onText: @escaping @Sendable (String) async -> Void
    ) async throws(ModelCallError) -> ChatCompletion {
        let request = try Self.request(model: model, messages: messages, temperature: temperature, maxTokens: maxTokens, stream: true)
        let answer = StreamedAnswer()
        let streamed: HTTPTransport.Streamed
        do throws(HTTPFailure) {
            streamed = try await transport.stream(request, timeout: timeout, maxBytes: Self.maxResponseBytes) { chunk in
                if let text = answer.feed(chunk.readableBytesView) { await onText(text) }
            }
        } catch {
            logger.debug("Council model stream failed", metadata: ["council.model": "\(model.name)", "council.error": "\(error)"])
            throw Self.modelCallError(error, timeout: timeout)
        }
        switch streamed {
        case .refused(let refusal):
            let detail = OpenAIErrorDetail.readable(from: refusal.body, status: refusal.status, apiKey: model.apiKey)
            throw Self.error(status: refusal.status, retryAfter: refusal.retryAfter(), detail: detail)
        case .read(_, _, let elapsed):
            if let text = answer.finish() { await onText(text) }
            return try answer.completion(elapsed: elapsed, model: model, messages: messages)
        }
    }
}

/// A streamed answer as it comes in: the events read so far, the text they carry, and how the
/// stream ended.
final class StreamedAnswer: Sendable {
    private struct State {
        var events = ServerSentEvents()
        var text = ""
        var model: String?
        /// `[DONE]` came.
        var done = false
        /// A chunk said why the answer finished (`stop`, `length`).
        var finished = false
        var error: OpenAIWire.ErrorObject?
        /// The server's count, from the chunk that carried it (the last, with no choices).
        var usage: OpenAIWire.Usage?
    }

    private let state = Mutex(State())

    /// Reads `bytes`; the whole text so far when it grew.
    func feed(_ bytes: some Sequence<UInt8>) -> String? {
        state.withLock { state in
            let before = state.text.utf8.count
            for event in state.events.feed(bytes) { Self.read(event, into: &state) }
            return state.text.utf8.count != before ? state.text.trimmingWhitespace : nil
        }
    }

    /// The body ended: an event it ended inside; the whole text when that made it grow.
    func finish() -> String? {
        state.withLock { state in
            let before = state.text.utf8.count
            for event in state.events.finish() { Self.read(event, into: &state) }
            return state.text.utf8.count != before ? state.text.trimmingWhitespace : nil
        }
    }

    /// The whole answer, or why the stream was not one.
    func completion(elapsed: Duration, model: CouncilModel, messages: [ChatMessage]) throws(ModelCallError) -> ChatCompletion {
        let apiKey = model.apiKey
        let state = state.withLock { $0 }
        if let error = state.error {
            let status = error.code.flatMap { (400...599).contains($0) ? $0 : nil } ?? 502
            throw OpenAICompatibleClient.error(
                status: status, retryAfter: nil, detail: OpenAIErrorDetail.clean(error.message ?? "unknown error", apiKey: apiKey))
        }
        guard state.done || state.finished else {
            throw .malformed(reason: state.text.isEmpty ? "the stream ended before any answer" : "the stream ended before the answer was complete")
        }
        let text = state.text.trimmingWhitespace
        guard !text.isEmpty else { throw .malformed(reason: "empty answer") }
        return ChatCompletion(
            text: text, model: state.model, elapsed: elapsed,
            usage: OpenAICompatibleClient.usage(of: model, messages: messages, answer: text, reported: state.usage, elapsed: elapsed))
    }

    private static func read(_ event: String, into state: inout State) {
        if event.trimmingWhitespace == "[DONE]" {
            state.done = true
            return
        }
        guard let chunk = try? JSONDecoder().decode(OpenAIWire.StreamChunk.self, from: Data(event.utf8)) else { return }
        if let model = chunk.model { state.model = model }
        if let error = chunk.error, chunk.choices?.isEmpty ?? true { state.error = error }
        if let usage = chunk.usage { state.usage = usage }
        guard let choice = chunk.choices?.first else { return }
        if let piece = choice.delta?.content ?? choice.text { state.text += piece }
        if choice.finishReason != nil { state.finished = true }
    }
}
