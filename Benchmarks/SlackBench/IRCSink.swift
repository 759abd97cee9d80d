import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// An IRC server for a `--platform irc` run: the protocol the relay speaks to a server — CAP,
/// NICK and USER, JOIN, PING and PONG, PRIVMSG — answered in process on a loopback port, so what
/// the run measures is the relay's own cost (ngIRCd, the tests' peer, throttles every client to
/// a few commands a second, and would measure itself).
///
/// Each user types in a channel of their own (`#bench-<user>`): command `index` reaches the
/// relay as `:user<user>!u@bench PRIVMSG #bench-<user> :!translate ja … command number <index>`,
/// and a reply line naming that number is handed to the `ReplySink` (every line a message of its
/// own: IRC has no ids, so a line sent again counts as a double). The relay's confirmation
/// `PING`s are answered at once. A command typed while no relay is connected is lost, as on IRC.
final class IRCSink: PlatformPeer, SocketPeer {
    private struct State {
        var relay: NIOAsyncChannelOutboundWriter<ByteBuffer>?
        var registered = false
        var pings = 0
        var lost = 0
    }

    private let state = Mutex(State())
    private let replies: ReplySink
    private let channel: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
    private let task = Mutex<Task<Void, Never>?>(nil)
    let port: Int

    private init(port: Int, channel: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>, replies: ReplySink) {
        self.port = port
        self.channel = channel
        self.replies = replies
    }

    /// The relay's environment for this server: plain text on loopback, and a pace the server
    /// does not limit (`IRC_LINES_PER_SECOND`), so replies go as fast as the relay makes them.
    var environment: [String: String] {
        ["IRC_SERVER": "irc://127.0.0.1:\(port)", "IRC_NICK": "Rhea", "IRC_CHANNELS": "#bench", "IRC_LINES_PER_SECOND": "1000"]
    }

    var summary: String? {
        let (pings, lost) = state.withLock { ($0.pings, $0.lost) }
        return "IRC server answered \(pings) confirmation PINGs; \(lost) commands typed with no relay connected"
    }

    static func start(forwardingTo sink: ReplySink, logger: Logger) async throws -> IRCSink {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineDecoder()))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: child)
                }
            }
        let irc = IRCSink(port: channel.channel.localAddress?.port ?? 0, channel: channel, replies: sink)
        irc.task.withLock { $0 = Task { await irc.accept() } }
        return irc
    }

    /// Serves every connection, until the listening channel closes.
    private func accept() async {
        _ = try? await channel.executeThenClose { connections in
            try await withThrowingDiscardingTaskGroup { group in
                for try await connection in connections {
                    group.addTask { await self.serve(connection) }
                }
            }
        }
    }

    /// One relay's connection, until it closes.
    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        try? await connection.executeThenClose { lines, outbound in
            state.withLock { $0.relay = outbound }
            defer {
                state.withLock { state in
                    state.relay = nil
                    state.registered = false
                }
            }
            var nick = "Rhea"
            for try await buffer in lines {
                let arrived = ContinuousClock.now
                let line = String(buffer: buffer)
                let words = line.split(separator: " ", maxSplits: 2)
                guard let command = words.first?.uppercased() else { continue }
                switch command {
                case "CAP" where words.count > 1 && words[1] == "LS":
                    try await outbound.write(ByteBuffer(string: ":bench CAP * LS :\r\n"))
                case "NICK":
                    nick = words.count > 1 ? String(words[1]) : nick
                case "USER":
                    try await outbound.write(ByteBuffer(string: ":bench 001 \(nick) :Welcome\r\n"))
                    state.withLock { $0.registered = true }
                case "JOIN":
                    let channels = words.count > 1 ? words[1] : ""
                    for channel in channels.split(separator: ",") {
                        try await outbound.write(ByteBuffer(string: ":\(nick)!rhea@bench JOIN \(channel)\r\n:bench 353 \(nick) = \(channel) :\(nick)\r\n"))
                    }
                case "PING":
                    let token = words.count > 1 ? String(words[1].drop { $0 == ":" }) : ""
                    state.withLock { $0.pings += 1 }
                    try await outbound.write(ByteBuffer(string: ":bench PONG bench :\(token)\r\n"))
                case "QUIT":
                    // As a server does: the connection ends.
                    return
                case "PRIVMSG":
                    if let range = line.range(of: "command number "), let index = Int(line[range.upperBound...].prefix { $0.isNumber }) {
                        replies.arrived(index, at: arrived, busy: line.contains("ahead of you"), message: nil)
                    }
                default:
                    break
                }
            }
        }
    }

    /// Waits (up to 60 s) until a relay has registered.
    func connected() async {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, !state.withLock({ $0.registered }) {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Command `index` from user `user`, typed in their channel.
    func post(_ index: Int, user: Int) -> Bool {
        guard let relay = state.withLock({ $0.registered ? $0.relay : nil }) else {
            state.withLock { $0.lost += 1 }
            return false
        }
        let line = ":user\(user)!u@bench PRIVMSG #bench-\(user) :!translate ja Good morning, this is command number \(index)\r\n"
        Task { try? await relay.write(ByteBuffer(string: line)) }
        return true
    }

    func stop() async {
        try? await channel.channel.close()
        let task = task.withLock { $0 }
        task?.cancel()
        _ = await task?.value
    }
}

/// Lines ended by LF (a CR before it dropped).
private struct LineDecoder: NIOSingleStepByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let length = buffer.readableBytesView.distance(from: buffer.readableBytesView.startIndex, to: newline)
        var line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        if line.readableBytesView.last == UInt8(ascii: "\r") { line.moveWriterIndex(to: line.writerIndex - 1) }
        return line
    }

    mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? { try decode(buffer: &buffer) }
}
