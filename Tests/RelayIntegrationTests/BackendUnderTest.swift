import AsyncHTTPClient
import Foundation
import Logging
import RelayCore
import RelayHTTP
import RelayStore
import RelayTestSupport
import RelayTribunal
import Testing

/// One of the two real backends, over its fake servers, with a way to make a tier's models
/// agree or disagree — so one scenario can run unchanged against both.
enum BackendKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case rhea, council
    var testDescription: String { rawValue }
}

final class BackendUnderTest: Sendable {
    let kind: BackendKind
    let tribunal: any Tribunal
    private let rhea: FakeRheaTribunal?
    private let councilServers: [Tier: [FakeOpenAIServer]]
    private let httpClient: HTTPClient

    private init(kind: BackendKind, tribunal: any Tribunal, rhea: FakeRheaTribunal?, councilServers: [Tier: [FakeOpenAIServer]], httpClient: HTTPClient) {
        self.kind = kind
        self.tribunal = tribunal
        self.rhea = rhea
        self.councilServers = councilServers
        self.httpClient = httpClient
    }

    /// Starts the backend with every tier agreeing.
    static func start(_ kind: BackendKind) async throws -> BackendUnderTest {
        let httpClient = HTTPTransport.makeClient()
        let logger = Logger(label: "test")
        switch kind {
        case .rhea:
            let fake = try await FakeRheaTribunal.start()
            await fake.setDefaultAgreement(0.9)
            let client = RheaTribunalClient(
                configuration: RheaTribunalConfiguration(baseURL: fake.url, apiKey: FakeRheaTribunal.defaultAPIKey, retry: .none),
                transport: HTTPTransport(client: httpClient), logger: logger)
            return BackendUnderTest(kind: kind, tribunal: client, rhea: fake, councilServers: [:], httpClient: httpClient)
        case .council:
            var servers: [Tier: [FakeOpenAIServer]] = [:]
            var models: [CouncilModel] = []
            for tier in Tier.allCases {
                for index in 1...3 {
                    let server = try await FakeOpenAIServer.start(persona: .judging(.agree))
                    servers[tier, default: []].append(server)
                    models.append(CouncilModel(name: "\(tier.rawValue)-\(index)", baseURL: server.url, model: "fake-\(tier.rawValue)-\(index)", tier: tier))
                }
            }
            let council = Council(
                configuration: CouncilConfiguration(models: models, deadline: .seconds(10)),
                client: OpenAICompatibleClient(transport: HTTPTransport(client: httpClient), logger: logger), logger: logger)
            return BackendUnderTest(kind: kind, tribunal: council, rhea: nil, councilServers: servers, httpClient: httpClient)
        }
    }

    /// Agreeing tiers score ≥ 90%; disagreeing ones about 69% (Rhea: 50%), below an 80% gate.
    func setTier(_ tier: Tier, agreeing: Bool) async {
        if let rhea {
            await rhea.setAgreement(agreeing ? 0.9 : 0.5, forTier: tier)
        }
        if let servers = councilServers[tier] {
            for (index, server) in servers.enumerated() {
                server.setPersona(agreeing || index < 2 ? .judging(.agree) : .judging(.disagree))
            }
        }
    }

    /// Every model of every tier agrees, with high agreement, that claims are false.
    func rejectEverything() async {
        await rhea?.setDefaultAgreement(0.9)
        await rhea?.setStance("negative")
        for server in councilServers.values.flatMap({ $0 }) { server.setPersona(.judging(.disagree)) }
    }

    func stop() async {
        await rhea?.stop()
        for server in councilServers.values.flatMap({ $0 }) { await server.stop() }
        try? await httpClient.shutdown()
    }

    /// Runs `body` with a relay over this backend and a fresh SQLite store.
    static func withRelay<T>(_ kind: BackendKind, _ body: (Relay, BackendUnderTest) async throws -> T) async throws -> T {
        let backend = try await start(kind)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parity-\(UUID().uuidString).sqlite").path
        let store = try await SQLiteStore.open(path: path)
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        do {
            let result = try await body(Relay(tribunal: backend.tribunal, store: store), backend)
            try await store.close()
            await backend.stop()
            return result
        } catch {
            try? await store.close()
            await backend.stop()
            throw error
        }
    }
}

extension Relay {
    /// Sends one command line as user `ada` of team `t`.
    func send(_ text: String, repliedTo: String? = nil) async -> Reply {
        await handle(Event(platform: "test", team: "t", channel: "c", user: "ada", text: text, repliedTo: repliedTo)) ?? .error("duplicate")
    }
}
