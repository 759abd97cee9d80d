import Foundation
import HummingbirdTesting
import IRCAdapter
import Logging
import NIOCore
import NIOPosix
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import Synchronization
import Testing

/// A graceful shutdown sends QUIT and waits for the server to close the connection — but not
/// for a server that never does: after 3 s the relay closes it itself, well inside the
/// shutdown's grace (30 s here), so a SIGTERM ends the relay promptly, not when the connection's
/// keepalive gives up three minutes later.
@Suite("IRC: a shutdown ends even if the server ignores QUIT")
struct IRCShutdownTests {
    @Test func quitIsSentAndTheConnectionClosedWithinSeconds() async throws {
        let heard = Mutex<[String]>([])
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0) { child in
                child.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: child) }
            }
        let port = try #require(server.channel.localAddress?.port)
        let accepting = Task {
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    try await connection.executeThenClose { inbound, outbound in
                        for try await bytes in inbound {
                            let text = String(buffer: bytes)
                            heard.withLock { $0.append(text) }
                            if text.contains("CAP LS") { try await outbound.write(ByteBuffer(string: ":srv CAP * LS :\r\n")) }
                            if text.contains("USER ") { try await outbound.write(ByteBuffer(string: ":srv 001 Rhea :Welcome\r\n")) }
                            // QUIT is heard, and ignored: the connection stays open.
                        }
                    }
                }
            }
        }
        defer { accepting.cancel() }
        try await TemporaryDatabase.with { database in
            try await withFakeRheaTribunal { tribunal in
                var configuration = AppConfiguration(storePath: database.path)
                configuration.tribunal.baseURL = tribunal.url
                configuration.platforms = [
                    IRCPlatform(
                        configuration: IRCConfiguration(server: IRCServer(host: "127.0.0.1", port: port, usesTLS: false), nick: "Rhea", channels: ["#a"]))
                ]
                configuration.shutdownGrace = .seconds(30)
                let app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: .init(label: "test.irc-quit"))
                let stopping = try await app.test(.live) { _ in
                    try await eventually("the relay to register and join") { heard.withLock { $0.joined().contains("JOIN #a") } }
                    return ContinuousClock.now
                }
                let took = ContinuousClock.now - stopping
                #expect(heard.withLock { $0.joined().contains("QUIT") }, "QUIT was sent")
                // Without the close after QUIT it took 180 s (the keepalive's end); a loaded
                // machine has taken 11 s to stop the whole server with it.
                #expect(took < .seconds(60), "the shutdown took \(took)")
            }
        }
    }
}
