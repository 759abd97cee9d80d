import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import RelayCore
import RelayPlatform
import ServiceLifecycle
import Synchronization

/// The relay's XMPP connection, while this replica holds its lease (`xmpp.connection`):
/// connects (STARTTLS, or direct TLS), signs in, binds, joins the rooms (`XMPPSessionState`),
/// hands messages to `XMPPInbound` and sends what delivery queues (`XMPPLink`); on any end — the
/// server gone, a stream error, a silent server, a malformed or oversized stanza — it reconnects
/// after a backoff (2 s doubling to 2 minutes, reset after a session that lasted).
///
/// The stream is read as it comes (`XMLStreamParser`): it never ends until the session does,
/// and a stanza past 256 KB or XML that XMPP does not allow ends the session with a log line,
/// never a crash or a buffer without bound. A graceful shutdown says unavailable, closes the
/// stream, and waits for the server to close the connection (3 s at most).
struct XMPPClient: Sendable {
    enum Ending: SessionEnding {
        case closedByServer
        case silent(Duration)
        case notReady
        case refused(String)
        case closing(String)
        case malformed(String)

        var refusedCredentials: String? {
            if case .refused(let reason) = self { reason } else { nil }
        }

        var description: String {
            switch self {
            case .closedByServer: "the server closed the connection"
            case .silent(let time): "the server said nothing for \(time)"
            case .notReady: "the session was not ready within a minute"
            case .refused(let reason): reason
            case .closing(let reason): reason
            case .malformed(let reason): reason
            }
        }
    }

    /// Where to connect (`XMPP_SERVER`); nil: the domain's SRV records (`lookup`).
    let server: XMPPServer?
    var lookup = XMPPServerLookup()
    /// The account (bare): the resource is `resource`.
    let jid: JID
    var resource = "rhea-relay"
    let password: String
    let nick: String
    let rooms: [String]
    let tls: NIOSSLContext
    let link: XMPPLink
    let inbound: XMPPInbound
    let clock: any RelayClock
    let credentials: CredentialReporter
    let logger: Logger
    /// A server silent this long is pinged; twice this long, it is gone.
    var keepalive: Duration = .seconds(90)
    var backoff = Backoff(initial: .seconds(2), maximum: .seconds(120))

    /// Connects and reconnects until cancelled or shut down.
    func run(_ grant: LeaseGrant) async {
        await runReconnecting(
            platform: "xmpp", credential: "XMPP_PASSWORD_FILE", backoff: backoff, clock: clock, credentials: credentials, logger: logger,
            session: { try await session() }, onGracefulShutdown: { link.endStream() })
    }

    /// The first of the servers to try that takes the connection.
    private func connect() async throws -> (NIOAsyncChannel<ByteBuffer, ByteBuffer>, XMPPServer) {
        let candidates = if let server { [server] } else { await lookup.servers(for: jid.domain) }
        guard !candidates.isEmpty else { throw Ending.closing("\(jid.domain)'s SRV records say it offers no XMPP service") }
        var lastError: (any Error)?
        for candidate in candidates {
            do {
                return (try await connect(to: candidate), candidate)
            } catch {
                logger.notice("xmpp: could not connect", metadata: ["server": "\(candidate)", "error": "\(error)"])
                lastError = error
            }
        }
        throw lastError ?? Ending.closedByServer
    }

    private func connect(to server: XMPPServer) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        let (tls, direct, domain) = (tls, server.directTLS, jid.domain)
        return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(15))
            .connect(host: server.host, port: server.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if direct {
                        // The certificate names the JID's domain (RFC 6120 §13.7.2.1), not
                        // whichever host serves it.
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: domain))
                    }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
    }

    /// One connection, from connect to its end (always by throwing).
    private func session() async throws {
        let (channel, server) = try await connect()
        let nioChannel = channel.channel
        logger.info("xmpp: connected", metadata: ["server": "\(server)"])
        try await channel.executeThenClose { bytes, outbound in
            let writer = XMPPWriter(outbound: outbound)
            let initial = XMPPSessionState(
                jid: jid, password: password, resource: resource, nick: nick, rooms: rooms, secured: server.directTLS, loopback: server.isLoopback)
            try await writer.write(raw: initial.streamHeader)
            let (queue, continuation) = AsyncStream.makeStream(of: XMPPLink.Batch.self)
            let (messages, arriving) = AsyncStream.makeStream(of: XMLElement.self, bufferingPolicy: .bufferingNewest(1_000))
            let watch = XMPPSessionWatch(now: clock.now)
            defer {
                continuation.finish()
                arriving.finish()
                if let id = watch.attached.withLock({ $0 }) { link.detach(id) }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await batch in queue {
                        for item in batch.items {
                            switch item {
                            case .stanza(let element):
                                try await writer.write(element)
                            case .endStream:
                                try await writer.write(raw: "</stream:stream>")
                                // The server closes its side in answer; one that does not is not
                                // waited for past 3 s (a shutdown must end).
                                nioChannel.eventLoop.scheduleTask(in: .seconds(3)) { nioChannel.close(promise: nil) }
                            }
                        }
                        if batch.sequence > 0 {
                            try await writer.write(XMPPSessionState.ping(id: XMPPLink.confirmationID(batch.sequence), to: jid.domain))
                        }
                    }
                }
                group.addTask {
                    // Messages are handled apart from the reader: a command's handling may ask
                    // the asker's client something and wait for the answer the reader brings.
                    for await message in messages { await inbound.receive(message, link: link) }
                }
                group.addTask {
                    let start = clock.now
                    while true {
                        try await clock.sleep(for: .seconds(10))
                        if watch.attached.withLock({ $0 }) == nil, clock.now.duration(since: start) > .seconds(60) { throw Ending.notReady }
                        let silent = clock.now.duration(since: watch.lastHeard.withLock { $0 })
                        if silent > keepalive * 2 { throw Ending.silent(silent) }
                        if silent > keepalive { try await writer.write(XMPPSessionState.ping(id: "keepalive", to: jid.domain)) }
                    }
                }
                group.addTask {
                    var state = initial
                    var parser = XMLStreamParser()
                    for try await buffer in bytes {
                        watch.lastHeard.withLock { $0 = clock.now }
                        let events: [XMLStreamParser.Event]
                        do throws(XMLStreamParser.Malformed) {
                            events = try parser.feed(buffer.readableBytesView)
                        } catch {
                            logger.error("xmpp: the server sent what XMPP does not allow; reconnecting", metadata: ["reason": "\(error)"])
                            try? await writer.write(raw: "<stream:error><xml-not-well-formed xmlns='\(XMPPNamespace.streams)'/></stream:error></stream:stream>")
                            throw Ending.malformed(error.description)
                        }
                        for event in events {
                            for action in state.receive(event) {
                                switch action {
                                case .send(let element):
                                    try await writer.write(element)
                                case .openStream:
                                    parser = XMLStreamParser()
                                    try await writer.write(raw: state.streamHeader)
                                case .startTLS:
                                    parser = XMLStreamParser()
                                    try await nioChannel.pipeline.addHandler(
                                        NIOSSLClientHandler(context: tls, serverHostname: jid.domain), position: .first
                                    ).get()
                                    try await writer.write(raw: state.streamHeader)
                                case .ready(let bound):
                                    logger.notice(
                                        "xmpp: signed in; joining the rooms", metadata: ["jid": "\(bound)", "rooms": "\(rooms.joined(separator: ","))"])
                                    credentials.accepted("XMPP_PASSWORD_FILE")
                                    let id = link.attach(continuation, as: bound)
                                    watch.attached.withLock { $0 = id }
                                case .joined(let room, let nick):
                                    if nick != self.nick {
                                        logger.warning(
                                            "xmpp: the nick was taken in a room; using a fallback", metadata: ["room": "\(room)", "nick": "\(nick)"])
                                    }
                                    logger.info("xmpp: joined a room", metadata: ["room": "\(room)", "nick": "\(nick)"])
                                    link.joined(room, as: nick)
                                case .notJoined(let room, let reason):
                                    logger.error("xmpp: a room refused the relay", metadata: ["room": "\(room)", "reason": "\(reason)"])
                                case .message(let message):
                                    if case .dropped = arriving.yield(message) {
                                        logger.warning("xmpp: too many messages at once; the oldest was dropped")
                                    }
                                case .answered(let id, let answer):
                                    link.answered(id: id, answer)
                                case .refusedCredentials(let reason):
                                    throw Ending.refused(reason)
                                case .close(let reason):
                                    throw Ending.closing(reason)
                                }
                            }
                            if state.isReady, case .stanza(let element) = event, element.name == "presence" {
                                for room in rooms { link.joined(room, as: state.rooms[room]?.joined == true ? state.nick(in: room) : nil) }
                            }
                        }
                    }
                    throw Ending.closedByServer
                }
                defer {
                    // The reader waits for the server's next bytes: closing ends it now.
                    nioChannel.close(promise: nil)
                    group.cancelAll()
                }
                try await group.next()
            }
        }
    }
}

/// What a session's tasks share: whether it is ready (its id on the link), and when the server
/// last said anything.
final class XMPPSessionWatch: Sendable {
    let attached = Mutex<Int?>(nil)
    let lastHeard: Mutex<Date>

    init(now: Date) { lastHeard = Mutex(now) }
}

/// Writes the stream: each element through the one XML writer (`XMLElement.xml`), so nothing
/// a model wrote can be read as markup.
struct XMPPWriter: Sendable {
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

    func write(_ element: XMLElement) async throws { try await write(raw: element.xml) }

    func write(raw text: String) async throws { try await outbound.write(ByteBuffer(string: text)) }
}
