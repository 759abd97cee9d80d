import Hummingbird
import Metrics
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Caps the connections the server holds (`http.maxConnections`), so clients that trickle their
/// requests cannot grow its memory without bound (each held connection costs about 30 KiB).
///
/// A plain cap would let such clients lock real ones out. So when a new connection would go over
/// the cap, the one whose request has been arriving longest is closed — a trickled body; a real
/// request arrives in milliseconds — or else the one idle longest; never one whose request is in
/// and whose answer is being made. Only when every connection is doing that is the new one closed.
final class ConnectionLimiter: Sendable {
    private enum Phase {
        case idle(since: NIODeadline)
        case reading(since: NIODeadline)
        case answering
    }

    private struct Held {
        let channel: any Channel
        var phase: Phase
    }

    let maximum: Int
    private let held = Mutex<[ObjectIdentifier: Held]>([:])

    init(maximum: Int) {
        self.maximum = max(1, maximum)
    }

    /// A connection opened; closes one held connection (or this one) when over the cap.
    func opened(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        let victim = held.withLock { held -> (any Channel)? in
            held[key] = Held(channel: channel, phase: .idle(since: .now()))
            guard held.count > maximum else { return nil }
            var oldestReading: (key: ObjectIdentifier, since: NIODeadline)?
            var oldestIdle: (key: ObjectIdentifier, since: NIODeadline)?
            for (other, connection) in held where other != key {
                switch connection.phase {
                case .reading(let since) where oldestReading.map({ since < $0.since }) ?? true: oldestReading = (other, since)
                case .idle(let since) where oldestIdle.map({ since < $0.since }) ?? true: oldestIdle = (other, since)
                default: break
                }
            }
            let chosen = oldestReading?.key ?? oldestIdle?.key ?? key
            return held.removeValue(forKey: chosen)?.channel
        }
        guard let victim else { return }
        Counter(label: "relay_http_connections_shed_total").increment()
        victim.close(promise: nil)
    }

    func requestStarted(_ channel: any Channel) { set(channel, .reading(since: .now())) }
    func requestArrived(_ channel: any Channel) { set(channel, .answering) }
    func answered(_ channel: any Channel) { set(channel, .idle(since: .now())) }

    func closed(_ channel: any Channel) {
        _ = held.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Connections held now.
    var count: Int { held.withLock(\.count) }

    private func set(_ channel: any Channel, _ phase: Phase) {
        held.withLock { held in held[ObjectIdentifier(channel)]?.phase = phase }
    }
}

/// Reports a connection's phases to the limiter.
final class ConnectionLimitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limiter: ConnectionLimiter

    init(limiter: ConnectionLimiter) {
        self.limiter = limiter
    }

    func handlerAdded(context: ChannelHandlerContext) {
        limiter.opened(context.channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: limiter.requestStarted(context.channel)
        case .body: break
        case .end: limiter.requestArrived(context.channel)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { limiter.answered(context.channel) }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        limiter.closed(context.channel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        limiter.closed(context.channel)
    }
}

/// Bounds how long one request may take to arrive, and stops reading bodies nobody wants.
///
/// Each request gets `timeout` from its first byte to its last, then the connection is closed:
/// 2 000 clients that trickle a request hold 2 000 small connections for `timeout`, not forever.
/// The clock starts at the first byte, not at the decoded head, because a client can trickle the
/// header lines themselves (one every 2 s is never idle, and no head exists until the blank line):
/// `RequestBytesWatcher`, first in the pipeline, reports the bytes as they come. Hummingbird's
/// idle timeout covers a connection that sends nothing at all. Neither NIO nor Hummingbird offers
/// a whole-request deadline (NIO's `IdleStateHandler` is an idle timer too).
///
/// It also ends the connection after an answer sent before the request's body ended (a 401
/// for a bad signature, a 413 for a body over its cap), marking that answer `Connection: close`:
/// the server's side is shut at once, so the client learns it may stop sending, and what it
/// sends until then is discarded unread, never buffered; the read timeout still closes the
/// connection at the request's deadline. (Closing both sides at once would make the kernel
/// answer the unread bytes with a reset, which can destroy the answer before the client reads it.)
final class RequestReadTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum Phase {
        /// No request under way: the next byte starts one.
        case waiting
        /// A request is arriving, its deadline running.
        case arriving
        /// A request is in and its answer being made; bytes that come meanwhile belong to the next
        /// request, which NIO holds back until this answer is written, so its clock starts then.
        case answering(bytesCame: Bool)
    }

    private let timeout: TimeAmount
    private var phase = Phase.waiting
    /// The answer was sent while the request was still arriving: close once it is written.
    private var closeAfterResponse = false
    private var deadline: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Before the HTTP decoder (and before TLS, were there any): it sees every byte as it comes.
        try? context.pipeline.syncOperations.addHandler(RequestBytesWatcher(owner: self), position: .first)
    }

    /// Bytes came from the client (called by `RequestBytesWatcher`, on this channel's loop).
    fileprivate func bytesArrived() {
        switch phase {
        case .waiting:
            phase = .arriving
            startDeadline()
        case .arriving:
            break
        case .answering:
            phase = .answering(bytesCame: true)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            closeAfterResponse = false
            phase = .arriving
            if deadline == nil { startDeadline() }
        case .body:
            break
        case .end:
            phase = .answering(bytesCame: false)
            // A request answered early keeps its deadline: the connection closes at it.
            if !closeAfterResponse { cancelDeadline() }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var response) where isArriving:
            closeAfterResponse = true
            response.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(response)), promise: promise)
        case .end where closeAfterResponse:
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.assumeIsolatedUnsafeUnchecked().whenComplete { _ in
                context.close(mode: .output, promise: nil)
            }
            if let promise { written.futureResult.cascade(to: promise) }
            context.writeAndFlush(data, promise: written)
        case .end:
            if case .answering(let bytesCame) = phase {
                // The next request's bytes already came: its clock starts now.
                phase = bytesCame ? .arriving : .waiting
                if bytesCame { startDeadline() }
            }
            context.write(data, promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelDeadline()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelDeadline()
        self.context = nil
    }

    private var isArriving: Bool {
        if case .arriving = phase { return true }
        return false
    }

    private func startDeadline() {
        guard let context else { return }
        deadline?.cancel()
        deadline = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: timeout) {
            // Still arriving after `timeout`: drop it (the handler that reads its body sees the
            // connection end and gives up).
            context.close(promise: nil)
        }
    }

    private func cancelDeadline() {
        deadline?.cancel()
        deadline = nil
    }
}

/// Tells `RequestReadTimeoutHandler` when bytes come, before anything is decoded from them.
private final class RequestBytesWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    // Weak: the pipeline holds both, and either may leave it first as the channel closes.
    private weak var owner: RequestReadTimeoutHandler?

    init(owner: RequestReadTimeoutHandler) {
        self.owner = owner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        owner?.bytesArrived()
        context.fireChannelRead(data)
    }
}

@available(*, unavailable)
extension RequestBytesWatcher: Sendable {}

@available(*, unavailable)
extension RequestReadTimeoutHandler: Sendable {}
