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
/// Hummingbird's idle timeout closes a connection that sends nothing, and so bounds the time to
/// send headers (no request part exists until they are complete); but a client that trickles
/// its body a byte every few seconds is never idle. This handler gives each request
/// `timeout` from its head to its end, then closes the connection: 2 000 such clients hold
/// 2 000 small connections for `timeout`, not forever. Neither NIO nor Hummingbird offers a
/// whole-request deadline (NIO's `IdleStateHandler` is an idle timer too).
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

    private let timeout: TimeAmount
    /// A request's head has arrived and its end has not.
    private var readingRequest = false
    /// The answer was sent while the request was still arriving: close once it is written.
    private var closeAfterResponse = false
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            readingRequest = true
            closeAfterResponse = false
            deadline?.cancel()
            deadline = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: timeout) {
                // Still arriving after `timeout`: drop it (the handler that reads its body sees
                // the connection end and gives up).
                context.close(promise: nil)
            }
        case .body:
            break
        case .end:
            readingRequest = false
            // A request answered early keeps its deadline: the connection closes at it.
            if !closeAfterResponse { cancelDeadline() }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var response) where readingRequest:
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
    }

    private func cancelDeadline() {
        deadline?.cancel()
        deadline = nil
    }
}

@available(*, unavailable)
extension RequestReadTimeoutHandler: Sendable {}
