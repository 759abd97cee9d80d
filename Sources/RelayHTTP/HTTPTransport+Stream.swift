public import AsyncHTTPClient
public import NIOCore
public import NIOHTTP1
import RelayCore

extension HTTPTransport {
    /// What a streamed exchange brought back.
    public enum Streamed: Sendable {
        /// A 2xx whose body was handed to the reader as it came, until it ended.
        case read(status: Int, headers: HTTPHeaders, elapsed: Duration)
        /// Another status, with the start of its body (for the error it names); nothing was read.
        case refused(HTTPAnswer)
    }

    /// Sends `request` and hands a 2xx body to `read` chunk by chunk as it arrives (server-sent
    /// events: a model's answer as it is written), within `timeout` for the whole exchange and at
    /// most `maxBytes` in all.
    ///
    /// - Throws: `HTTPFailure` for everything that produced no status, and for a body cut off
    ///   midway (`.unreachable`, the connection closed) or past `maxBytes` (`.malformed`).
    public func stream(
        _ request: HTTPClientRequest, timeout: Duration, maxBytes: Int, read: @escaping @Sendable (ByteBuffer) async -> Void
    ) async throws(HTTPFailure) -> Streamed {
        let answered = try await responding(to: request, timeout: timeout, maxBytes: maxBytes) { response, started in
            var total = 0
            for try await chunk in response.body {
                total += chunk.readableBytes
                guard total <= maxBytes else { throw NIOTooManyBytesError(maxBytes: maxBytes) }
                await read(chunk)
            }
            return Streamed.read(status: Int(response.status.code), headers: response.headers, elapsed: started.duration(to: .now))
        }
        switch answered {
        case .read(let streamed): return streamed
        case .refused(let answer): return .refused(answer)
        }
    }

    /// A 2xx response read by `read`, or another status with the start of its body.
    enum Answered<Read: Sendable>: Sendable {
        case read(Read)
        case refused(HTTPAnswer)
    }

    /// Sends `request` and gives a 2xx response to `read`, all within `timeout`: AsyncHTTPClient's
    /// own deadline ends at the response head, so the exchange runs under a time limit that also
    /// bounds a server that sends its head and then stalls. Another status comes back with the
    /// start of its body (an error page is small; more of it is of no use). Cancelling the calling
    /// task cancels the request.
    func responding<Read: Sendable>(
        to request: HTTPClientRequest, timeout: Duration, maxBytes: Int,
        _ read: @escaping @Sendable (HTTPClientResponse, ContinuousClock.Instant) async throws -> Read
    ) async throws(HTTPFailure) -> Answered<Read> {
        if Task.isCancelled { throw .cancelled }
        let limit = timeout > .zero ? timeout : .milliseconds(1)
        let client = client
        let started = ContinuousClock.now
        // A little later than the time limit, so the limit decides and this is a safety net.
        let deadline = NIODeadline.now() + .milliseconds(Int64((limit.seconds * 1000).rounded(.up)) + 1000)
        let errorBodyLimit = 64 * 1024
        do {
            return try await withTimeLimit(limit, on: client.eventLoopGroup.any()) {
                let response = try await client.execute(request, deadline: deadline)
                let status = Int(response.status.code)
                guard (200..<300).contains(status) else {
                    let body = try await response.body.collect(upTo: errorBodyLimit)
                    return .refused(HTTPAnswer(status: status, headers: response.headers, body: Array(body.readableBytesView)))
                }
                return .read(try await read(response, started))
            }
        } catch {
            throw HTTPFailure.classify(error, timeout: limit, maxBodyBytes: maxBytes)
        }
    }
}
