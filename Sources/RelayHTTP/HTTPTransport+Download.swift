public import AsyncHTTPClient
import NIOCore
import NIOHTTP1
public import RelayCore

extension HTTPTransport {
    /// What a capped download brought back.
    public enum Download: Sendable {
        /// The whole answer: a 2xx with every byte of the file, or another status with the start
        /// of its body (for the error it names).
        case complete(HTTPAnswer)
        /// The file is larger than the cap: `declared` is the size its `Content-Length` gave
        /// (refused before a byte was read), nil when the body itself passed the cap (the read
        /// stopped there).
        case tooLarge(declared: Int?)
    }

    /// Fetches a file of at most `maxBytes` within `timeout`, streaming it: a declared length over
    /// the cap is refused before the body is read, and a body that grows past it is cut off as
    /// soon as it does, so a large or endless file costs no more than `maxBytes` of memory.
    ///
    /// - Throws: `HTTPFailure` for everything that produced no status (never `.status`: a
    ///   non-2xx comes back as `.complete`, for the caller to read).
    public func download(_ request: HTTPClientRequest, timeout: Duration, maxBytes: Int) async throws(HTTPFailure) -> Download {
        let answered = try await responding(to: request, timeout: timeout, maxBytes: maxBytes) { response, started in
            let declared = response.headers.first(name: "Content-Length").flatMap(Int.init)
            if let declared, declared > maxBytes {
                return Download.tooLarge(declared: declared)
            }
            var bytes: [UInt8] = []
            // Room for the whole file at once: an array grown by doubling holds up to twice the
            // file (and three times while it copies), which the voice memory budget counts on not.
            if let declared, declared > 0 { bytes.reserveCapacity(declared) }
            for try await chunk in response.body {
                guard chunk.readableBytes <= maxBytes - bytes.count else { return .tooLarge(declared: nil) }
                bytes.append(contentsOf: chunk.readableBytesView)
            }
            return .complete(HTTPAnswer(status: Int(response.status.code), headers: response.headers, body: bytes, elapsed: started.duration(to: .now)))
        }
        switch answered {
        case .read(let download): return download
        case .refused(let answer): return .complete(answer)
        }
    }
}

extension HTTPTransport.Download {
    /// A voice note's bytes, or the `VoiceFetchError` the chat is told: too large (with the size
    /// the host declared, when it did), or unavailable with `refusal`'s account of a non-2xx
    /// answer. One mapping for every platform's file host.
    public func voiceBytes(limit: Int, refusal: (HTTPAnswer) -> String) throws(VoiceFetchError) -> [UInt8] {
        switch self {
        case .tooLarge(let declared): throw .tooLarge(limit: limit, size: declared)
        case .complete(let answer) where answer.isSuccess: return answer.body
        case .complete(let answer): throw .unavailable(reason: refusal(answer))
        }
    }
}
