import Hummingbird
import NIOCore
import NIOHTTPTypes

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
