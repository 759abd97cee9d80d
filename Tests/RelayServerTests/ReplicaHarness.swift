import AsyncHTTPClient
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayHTTP
import RelayPipeline
import RelayPlatform
import RelayServer
import RelayTestSupport
import RelayTribunal

/// One relay of a deployment whose replicas share a store, built as `serve` builds one (with
/// its own transport, backend and replica name) and run on a loopback port in a task of its
/// own, until stopped gracefully (`stop`, as SIGTERM does) or killed (`kill`: its services are
/// cancelled, so nothing is released or saved on the way out, as after kill -9).
struct ReplicaRelay: Sendable {
    let name: String
    let client: any TestClientProtocol
    private let transport: HTTPTransport
    private let task: Task<Void, any Error>
    private let stopSignal: AsyncStream<Void>.Continuation

    /// Lease timings for tests: a dead holder's connection moves within 4.1 s, and a live one
    /// keeps it through 3.9 s without a renewal (a machine loaded by parallel tests stalls, and
    /// a live holder that lost its lease to a stall would break "never two at once").
    static let fastLeases = ConnectionLease.Timing(duration: .seconds(4), renewInterval: .milliseconds(100), margin: .milliseconds(100))

    static func start(_ name: String, _ configuration: AppConfiguration, store: any Store) async throws -> ReplicaRelay {
        var logger = Logger(label: "test.\(name)")
        logger.logLevel = .warning
        let transport = HTTPTransport(client: HTTPTransport.makeClient())
        let backend: any Tribunal =
            switch configuration.backend {
            case .rhea: RheaTribunalClient(configuration: configuration.tribunal, transport: transport, logger: logger)
            case .council(let council): Council(configuration: council, client: OpenAICompatibleClient(transport: transport, logger: logger), logger: logger)
            }
        let app: RelayApplication.App
        do {
            app = try RelayApplication.build(
                .init(
                    configuration: configuration, store: store, backend: backend, platforms: configuration.platforms, transport: transport,
                    registry: TestMetrics.registry, logger: logger, replica: name))
        } catch {
            try? await transport.client.shutdown()
            throw error
        }
        let (clients, clientReady) = AsyncStream.makeStream(of: (any TestClientProtocol).self)
        let (stopped, stopSignal) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            try await app.test(.live) { client in
                clientReady.yield(client)
                var stop = stopped.makeAsyncIterator()
                await stop.next()
            }
        }
        var iterator = clients.makeAsyncIterator()
        guard let client = await iterator.next() else {
            _ = await task.result
            try? await transport.client.shutdown()
            throw EventuallyTimedOut(what: "\(name) to listen")
        }
        return ReplicaRelay(name: name, client: client, transport: transport, task: task, stopSignal: stopSignal)
    }

    /// Shuts the relay down gracefully and waits until it stopped.
    func stop() async {
        stopSignal.yield()
        _ = await task.result
        try? await transport.client.shutdown()
    }

    /// Cancels everything the relay runs, at once, and waits until it stopped.
    func kill() async {
        task.cancel()
        _ = await task.result
        try? await transport.client.shutdown()
    }

    /// Waits until this relay has no run in flight and the shared outbox is empty.
    func settled(adminToken: String) async throws {
        try await eventually("\(name) to be idle (no run in flight, outbox empty)") {
            let response = try await client.execute(uri: "/readyz", method: .get, headers: [.authorization: "Bearer \(adminToken)"], body: nil)
            let report = JSONValue.parse(response.body.readableBytesView)
            return report?["runs"]?["inFlight"]?.intValue == 0 && report?["store"]?["outboxDepth"]?.intValue == 0
        }
    }
}
