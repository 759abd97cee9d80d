import NIOCore
import NIOPosix
import Synchronization

/// One TCP connection to a server on 127.0.0.1 that sends whatever bytes a test wants, when it
/// wants: requests no HTTP client would send, such as a body trickled a byte at a time or
/// headers that promise a body that never comes. What the server sends back is collected, and
/// the connection knows when the server closed it.
public final class RawConnection: Sendable {
    /// Nil for a connection the server closed as it accepted it.
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>?
    private let state = Mutex(State())

    private struct State {
        var received: [UInt8] = []
        var closed = false
        var closedAt: ContinuousClock.Instant?
    }

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>?) {
        self.outbound = outbound
    }

    /// Connects to `port` on 127.0.0.1, runs `body` while reading what the server sends, then
    /// closes the connection (if the server has not already).
    public static func with<T: Sendable>(port: Int, _ body: @Sendable (RawConnection) async throws -> T) async throws -> T {
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port) { channel in
                    channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
                }
        } catch ChannelError.ioOnClosedChannel {
            // Connected, then closed by the server before it could be used (a server past its
            // connection cap closes a connection as it accepts it): a connection closed at once.
            let connection = RawConnection(outbound: nil)
            connection.markClosed()
            return try await body(connection)
        }
        return try await channel.executeThenClose { inbound, outbound in
            let connection = RawConnection(outbound: outbound)
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    do {
                        for try await chunk in inbound { connection.append(chunk) }
                    } catch {
                        // A reset is a close too.
                    }
                    // Cancelled (the test is done with the connection): the server did not close it, and a test that
                    // reads `isClosed` as it stops must not see its own cancellation as the server's close.
                    if Task.isCancelled { return nil }
                    connection.markClosed()
                    return nil
                }
                let result = try await body(connection)
                group.cancelAll()
                return result
            }
        }
    }

    /// Sends `text` as it is (UTF-8). Throws once the connection is gone.
    public func send(_ text: String) async throws {
        guard let outbound else { throw ChannelError.ioOnClosedChannel }
        try await outbound.write(ByteBuffer(string: text))
    }

    /// Everything the server has sent so far, as text.
    public var received: String { state.withLock { String(decoding: $0.received, as: UTF8.self) } }

    /// Whether the server has closed the connection (or reset it).
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// When the close was read: a test measures how long the server kept a connection from this,
    /// not from when it happened to look (`isClosed` between its own writes and sleeps).
    public var closedAt: ContinuousClock.Instant? { state.withLock { $0.closedAt } }

    /// The status code of the response received, once its status line has arrived.
    public var status: Int? {
        let text = received
        guard text.hasPrefix("HTTP/1.1 "), text.utf8.count >= 12 else { return nil }
        return Int(text.dropFirst(9).prefix(3))
    }

    private func append(_ chunk: ByteBuffer) {
        state.withLock { $0.received += chunk.readableBytesView }
    }

    private func markClosed() {
        state.withLock { state in
            state.closed = true
            state.closedAt = ContinuousClock.now
        }
    }
}
