import NIOCore
import NIOPosix
import Synchronization

/// A nameserver on a loopback UDP port for the tests, answering SRV queries (RFC 1035, RFC 2782)
/// from a table, and NXDOMAIN for any other name: what the system's resolver asks it is what it
/// would ask a real one.
public final class FakeDNSServer: Sendable {
    public struct SRV: Sendable, Hashable {
        public var priority: UInt16
        public var weight: UInt16
        public var port: UInt16
        public var target: String

        public init(priority: UInt16, weight: UInt16 = 0, port: UInt16, target: String) {
            self.priority = priority
            self.weight = weight
            self.port = port
            self.target = target
        }
    }

    // Its own event loop, answering on it (no task of the shared pool): a test beside busy ones
    // still has its answers within the resolver's two-second retransmission.
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let table: Table
    public let port: Int

    /// Names asked for, in order.
    public var asked: [String] { table.queries.withLock { $0 } }

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, table: Table) {
        self.group = group
        self.channel = channel
        self.table = table
        self.port = channel.localAddress?.port ?? 0
    }

    /// `records` by name (`_xmpp-client._tcp.localhost`, lower case, no final dot).
    public static func start(records: [String: [SRV]]) async throws -> FakeDNSServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let table = Table(records: records)
        let channel = try await DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Answering(table: table)) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return FakeDNSServer(group: group, channel: channel, table: table)
    }

    public func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    private final class Answering: ChannelInboundHandler, Sendable {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        typealias OutboundOut = AddressedEnvelope<ByteBuffer>
        let table: Table
        init(table: Table) { self.table = table }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            if let answer = table.answer(to: envelope.data) {
                context.writeAndFlush(wrapOutboundOut(AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: answer)), promise: nil)
            }
        }
    }
}

/// The records a `FakeDNSServer` answers from, and the names it was asked for.
private final class Table: Sendable {
    let records: [String: [FakeDNSServer.SRV]]
    let queries = Mutex<[String]>([])

    init(records: [String: [FakeDNSServer.SRV]]) { self.records = records }

    /// The answer to one query: its id and question, and the name's SRV records.
    func answer(to query: ByteBuffer) -> ByteBuffer? {
        var reader = query
        guard let id = reader.readInteger(as: UInt16.self), reader.readSlice(length: 10) != nil else { return nil }
        let questionStart = reader.readerIndex
        var labels: [String] = []
        while let length = reader.readInteger(as: UInt8.self), length > 0 {
            guard let label = reader.readString(length: Int(length)) else { return nil }
            labels.append(label)
        }
        guard let type = reader.readInteger(as: UInt16.self), reader.readInteger(as: UInt16.self) != nil else { return nil }
        let question = query.getSlice(at: questionStart, length: reader.readerIndex - questionStart) ?? ByteBuffer()
        let name = labels.joined(separator: ".").lowercased()
        queries.withLock { $0.append(name) }
        let found = type == 33 ? records[name] : nil
        var out = ByteBuffer()
        out.writeInteger(id)
        // A response, recursion desired and available; NXDOMAIN for a name without records.
        out.writeInteger(UInt16(found == nil ? 0x8183 : 0x8180))
        out.writeInteger(UInt16(1))
        out.writeInteger(UInt16(found?.count ?? 0))
        out.writeInteger(UInt16(0))
        out.writeInteger(UInt16(0))
        out.writeImmutableBuffer(question)
        for record in found ?? [] {
            out.writeInteger(UInt16(0xC00C))  // the question's name
            out.writeInteger(UInt16(33))
            out.writeInteger(UInt16(1))
            out.writeInteger(UInt32(60))
            var data = ByteBuffer()
            data.writeInteger(record.priority)
            data.writeInteger(record.weight)
            data.writeInteger(record.port)
            for label in record.target.split(separator: ".") {
                data.writeInteger(UInt8(label.utf8.count))
                data.writeString(String(label))
            }
            data.writeInteger(UInt8(0))
            out.writeInteger(UInt16(data.readableBytes))
            out.writeImmutableBuffer(data)
        }
        return out
    }
}
