import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import RelayCore
import RelayPlatform
import ServiceLifecycle
import Synchronization

/// The relay's IRC connection, while this replica holds its lease (`irc.connection`): connects
/// (TLS through NIOSSL for `ircs://`), registers (`IRCSessionState`), joins the channels, hands
/// commands to `IRCInbound` and sends what delivery queues (`IRCLink`), paced (`IRCPacer`); on
/// any end — the server gone, an ERROR, a silent server, a line too long — it reconnects after a
/// backoff (2 s doubling to 2 minutes, reset after a session that lasted), and rejoins.
///
/// A graceful shutdown sends QUIT and waits for the server to close the connection.
struct IRCClient: Sendable {
    enum Ending: SessionEnding {
        case closedByServer
        case silent(Duration)
        case notWelcomed
        case refused(String)
        case closing(String)

        var refusedCredentials: String? {
            if case .refused(let reason) = self { reason } else { nil }
        }

        var description: String {
            switch self {
            case .closedByServer: "the server closed the connection"
            case .silent(let time): "the server said nothing for \(time)"
            case .notWelcomed: "the server did not welcome the relay within a minute"
            case .refused(let reason): reason
            case .closing(let reason): reason
            }
        }
    }

    let server: IRCServer
    let nick: String
    let password: String?
    let channels: [String]
    let tls: NIOSSLContext?
    let link: IRCLink
    let pacer: IRCPacer
    let inbound: IRCInbound
    let clock: any RelayClock
    let credentials: CredentialReporter
    let logger: Logger
    /// A server silent this long is asked (PING); twice this long, it is gone.
    var keepalive: Duration = .seconds(90)
    var backoff = Backoff(initial: .seconds(2), maximum: .seconds(120))

    /// Connects and reconnects until cancelled or shut down.
    func run(_ grant: LeaseGrant) async {
        await runReconnecting(
            platform: "irc", credential: "IRC_PASSWORD_FILE", backoff: backoff, clock: clock, credentials: credentials, logger: logger,
            session: { try await session() }, onGracefulShutdown: { link.quit() })
    }

    private func connect() async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        let (host, tls) = (server.host, tls)
        let hostname = tls != nil && !Self.isIPAddress(host) ? host : nil
        return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(15))
            .connect(host: host, port: server.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: hostname))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(IRCLineDecoder()))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
    }

    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host.trimmingCharacters(in: ["[", "]"]), port: 0)) != nil
    }

    /// One connection, from connect to its end (always by throwing).
    private func session() async throws {
        let channel = try await connect()
        let nioChannel = channel.channel
        logger.info("irc: connected", metadata: ["server": "\(server)"])
        try await channel.executeThenClose { lines, outbound in
            let writer = IRCWriter(outbound: outbound)
            let initial = IRCSessionState(nick: nick, password: password, channels: channels)
            try await writer.write(initial.opening())
            let (queue, continuation) = AsyncStream.makeStream(of: IRCLink.Batch.self)
            let watch = SessionWatch(now: clock.now)
            defer {
                continuation.finish()
                if let id = watch.attached.withLock({ $0 }) { link.detach(id) }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await batch in queue {
                        for line in batch.items {
                            try await paced(pacer.cost(ofLineBytes: line.line.utf8.count))
                            try await writer.write([line])
                            if line.command == "QUIT" {
                                // The server closes the connection on QUIT; one that does not is
                                // not waited for past 3 s (a shutdown must end).
                                nioChannel.eventLoop.scheduleTask(in: .seconds(3)) { nioChannel.close(promise: nil) }
                            }
                        }
                        if batch.sequence > 0 {
                            // Charged to the pace, but sent at once: until its PONG the lines count
                            // as unsent, and a crash in that time sends them again.
                            _ = pacer.reserve(pacer.confirmationCost, now: clock.now)
                            try await writer.write([IRCMessage("PING", [IRCClient.confirmationToken(batch.sequence)])])
                        }
                    }
                }
                group.addTask {
                    let start = clock.now
                    while true {
                        try await clock.sleep(for: .seconds(10))
                        if watch.attached.withLock({ $0 }) == nil, clock.now.duration(since: start) > .seconds(60) { throw Ending.notWelcomed }
                        let silent = clock.now.duration(since: watch.lastHeard.withLock { $0 })
                        if silent > keepalive * 2 { throw Ending.silent(silent) }
                        if silent > keepalive { try await writer.write([IRCMessage("PING", ["rhea-keepalive"])]) }
                    }
                }
                group.addTask {
                    var state = initial
                    var lastVersionReply = clock.now - .seconds(60)
                    for try await buffer in lines {
                        watch.lastHeard.withLock { $0 = clock.now }
                        guard let message = IRCMessage(line: Substring(buffer.ircText)) else { continue }
                        let before = state.members
                        for action in state.receive(message) {
                            switch action {
                            case .send(let reply):
                                try await writer.write([reply])
                            case .pong(let token):
                                if let sequence = IRCClient.sequence(ofToken: token) { link.confirmed(upTo: sequence) }
                            case .welcomed(let nick):
                                logger.notice(
                                    "irc: registered; joining the channels", metadata: ["nick": "\(nick)", "channels": "\(channels.joined(separator: ","))"])
                                if nick != self.nick {
                                    logger.warning("irc: the nick was taken; using a fallback", metadata: ["nick": "\(nick)", "wanted": "\(self.nick)"])
                                }
                                if password != nil { credentials.accepted("IRC_PASSWORD_FILE") }
                                let id = link.attach(continuation)
                                watch.attached.withLock { $0 = id }
                            case .refusedCredentials(let reason):
                                throw Ending.refused(reason)
                            case .close(let reason):
                                throw Ending.closing(reason)
                            case .message(let message):
                                switch IRCInbound.outcome(of: message, me: state.nick) {
                                case .ignore: break
                                case .run(let line, let address): await inbound.submit(line: line, address: address)
                                case .version(let asker):
                                    // One answer in 10 s: a CTCP flood must not become the relay's.
                                    guard clock.now.duration(since: lastVersionReply) > .seconds(10) else { break }
                                    lastVersionReply = clock.now
                                    continuation.yield(
                                        IRCLink.Batch(items: [IRCMessage("NOTICE", [asker, "\u{01}VERSION \(IRCInbound.version)\u{01}"])], sequence: 0))
                                }
                            }
                        }
                        if state.members != before || message.command == "001" || message.command == "NICK" {
                            link.update(IRCLink.Presence(nick: state.nick, members: state.members.mapValues { Set($0.values) }))
                        }
                    }
                    throw Ending.closedByServer
                }
                defer {
                    // The reader waits for the server's next line: closing ends it now.
                    nioChannel.close(promise: nil)
                    group.cancelAll()
                }
                try await group.next()
            }
        }
    }

    private func paced(_ cost: Duration) async throws {
        let wait = pacer.reserve(cost, now: clock.now)
        if wait > .zero { try await clock.sleep(for: wait) }
    }

    static func confirmationToken(_ sequence: Int) -> String { "rhea-\(sequence)" }

    static func sequence(ofToken token: String) -> Int? {
        guard token.hasPrefix("rhea-") else { return nil }
        return Int(token.dropFirst(5))
    }
}

/// What a session's tasks share: whether it was welcomed (its id on the link), and when the
/// server last said anything.
final class SessionWatch: Sendable {
    let attached = Mutex<Int?>(nil)
    let lastHeard: Mutex<Date>

    init(now: Date) { lastHeard = Mutex(now) }
}

/// Writes lines, each ended with CR LF. The last gate before the socket: whatever reaches it,
/// a CR, LF or NUL inside a line is dropped and a line is cut at 510 bytes (between scalars), so
/// no line can carry a second command.
struct IRCWriter: Sendable {
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

    func write(_ messages: [IRCMessage]) async throws {
        var buffer = ByteBuffer()
        for message in messages {
            let line = message.line
            if line.utf8.count <= 510 && !line.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
                buffer.writeString(line)
            } else {
                var kept = String.UnicodeScalarView()
                var bytes = 0
                for scalar in line.unicodeScalars where scalar != "\r" && scalar != "\n" && scalar != "\0" {
                    let width = UTF8.width(scalar)
                    if bytes + width > 510 { break }
                    bytes += width
                    kept.append(scalar)
                }
                buffer.writeString(String(kept))
            }
            buffer.writeStaticString("\r\n")
        }
        try await outbound.write(buffer)
    }
}
