import AsyncHTTPClient
import Foundation
public import Logging
import MultipartKit
import NIOCore
import NIOHTTP1
public import RelayCore
public import RelayHTTP

/// `POST {baseURL}/audio/transcriptions` on any OpenAI-compatible service: a multipart form with
/// the clip (`file`), `model`, `response_format=json` and, when the user set one, `language`;
/// answered `{"text": "…"}`.
///
/// It sends through the relay's shared `HTTPTransport` and maps its failures the way the
/// council's `OpenAICompatibleClient` does, into `TranscriptionError`s that tell the user which
/// it was. No retries: a voice note is sent again by its user, who is told why it failed.
public struct OpenAITranscriptionClient: Transcriber {
    /// A transcript is words; a few megabytes is far more than five minutes of speech.
    static let maxResponseBytes = 1024 * 1024

    public let configuration: TranscriptionConfiguration
    let transport: HTTPTransport
    let logger: Logger

    public init(configuration: TranscriptionConfiguration, transport: HTTPTransport, logger: Logger) {
        self.configuration = configuration
        self.transport = transport
        var logger = logger
        logger[metadataKey: "transcription"] = "openai"
        self.logger = logger
    }

    public var limits: TranscriptionLimits { configuration.limits }

    public func transcribe(_ audio: TranscriptionAudio) async throws(TranscriptionError) -> String {
        // Not audio at all: said at once, without a call the service would refuse anyway (or,
        // for some servers, answer with a bare 500 that reads like an outage).
        guard let format = AudioFormat.sniff(audio.bytes) else {
            throw .notAudio(detail: "no known audio format (declared \(audio.mimeType ?? "no type"))")
        }
        let request = try makeRequest(audio, format: format)
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(request, timeout: configuration.timeout, maxBodyBytes: Self.maxResponseBytes)
        } catch {
            let failure = Self.error(error, timeout: configuration.timeout)
            logger.debug("Transcription failed", metadata: ["transcription.error": "\(failure.reason)"])
            throw failure
        }
        guard answer.isSuccess else {
            let failure = Self.error(status: answer.status, retryAfter: answer.retryAfter())
            logger.debug("Transcription refused", metadata: ["transcription.status": "\(answer.status)"])
            throw failure
        }
        guard let text = JSONValue.parse(answer.body)?["text"]?.stringValue else {
            throw .malformed(reason: "no \"text\" in the answer")
        }
        logger.debug("Transcribed", metadata: ["transcription.bytes": "\(audio.bytes.count)", "transcription.elapsed": "\(answer.elapsed)"])
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `{baseURL}/audio/transcriptions`, without doubling a trailing slash.
    static func endpoint(baseURL: String) -> String {
        var base = baseURL.trimmingCharacters(in: .whitespaces)
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/audio/transcriptions"
    }

    func makeRequest(_ audio: TranscriptionAudio, format: AudioFormat) throws(TranscriptionError) -> HTTPClientRequest {
        let url = Self.endpoint(baseURL: configuration.baseURL)
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            throw .unreachable(reason: "base URL is not an http(s) URL")
        }
        var fields = [("model", configuration.model), ("response_format", "json")]
        if let language = audio.language { fields.append(("language", language)) }
        let boundary = "rhea-relay-" + UUID().uuidString
        let upload: MultipartUpload
        do {
            upload = try MultipartUpload(audio.bytes, format: format, fields: fields, boundary: boundary)
        } catch {
            throw .malformed(reason: "the request could not be encoded")
        }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "multipart/form-data; boundary=\(boundary)")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        // The key goes into this header only; nothing logs headers.
        if let key = configuration.apiKey?.trimmingCharacters(in: .whitespaces), !key.isEmpty {
            request.headers.add(name: "Authorization", value: "Bearer \(key)")
        }
        request.body = .stream(upload, length: .known(Int64(upload.length)))
        return request
    }

    /// The transport's failure as a `TranscriptionError`.
    static func error(_ failure: HTTPFailure, timeout: Duration) -> TranscriptionError {
        switch failure {
        case .cancelled: .cancelled
        case .timedOut: .timedOut(after: timeout)
        case .malformed(let reason): .malformed(reason: reason)
        case .invalidURL: .unreachable(reason: "base URL is not a valid http(s) URL")
        case .unreachable(let reason), .tls(let reason): .unreachable(reason: reason)
        case .status(let answer): error(status: answer.status, retryAfter: answer.retryAfter())
        }
    }

    /// A non-2xx status as a `TranscriptionError`: 400, 415 and 422 are the service refusing the
    /// file itself (not audio, or corrupt).
    static func error(status: Int, retryAfter: Duration?) -> TranscriptionError {
        switch status {
        case 400, 415, 422: .notAudio(detail: "the service refused the file (HTTP \(status))")
        case 401, 403: .unauthorized(status: status)
        case 429: .rateLimited(retryAfter: retryAfter)
        default: .serviceError(status: status)
        }
    }
}
