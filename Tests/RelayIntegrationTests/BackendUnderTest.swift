import AsyncHTTPClient
import Foundation
import HummingbirdTesting
import Logging
import Prometheus
import RelayCore
import RelayHTTP
import RelayPipeline
import RelayServer
import RelayStore
import RelayTestSupport
import RelayTribunal
import RheaAPI
import Synchronization
import Testing

/// One of the real backends, over its fake servers, with a way to make a tier's models agree or
/// disagree — so one scenario can run unchanged against each.
enum BackendKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case rhea, council
    /// The council behind a relay that serves the Rhea API (`serve` with `api.enabled`), asked
    /// through the relay's own Rhea client: the round trip of issue 13, point 3.
    case servedAPI = "Rhea API served by the relay"
    var testDescription: String { rawValue }
}

final class BackendUnderTest: Sendable {
    let kind: BackendKind
    let tribunal: any Tribunal
    private let rhea: FakeRheaTribunal?
    private let councilServers: [Tier: [FakeOpenAIServer]]
    private let councilConfiguration: CouncilConfiguration?
    private let httpClient: HTTPClient
    /// For a directly used council: the store it learns from.
    let ledger: LedgerSource?

    private init(
        kind: BackendKind, tribunal: any Tribunal, rhea: FakeRheaTribunal?, councilServers: [Tier: [FakeOpenAIServer]],
        councilConfiguration: CouncilConfiguration?, httpClient: HTTPClient, ledger: LedgerSource? = nil
    ) {
        self.kind = kind
        self.tribunal = tribunal
        self.rhea = rhea
        self.councilServers = councilServers
        self.councilConfiguration = councilConfiguration
        self.httpClient = httpClient
        self.ledger = ledger
    }

    static let servedAPIKey = "rk_parity_key_0123456789"

    /// Runs `body` with the backend to hand to a relay: for `servedAPI`, a Rhea client pointed at
    /// a running `serve` whose backend is the council (its own store, the API on, one key).
    func serving<T: Sendable>(_ body: @escaping @Sendable (any Tribunal) async throws -> T) async throws -> T {
        guard kind == .servedAPI, let councilConfiguration else { return try await body(tribunal) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("served-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        var configuration = AppConfiguration(storePath: path)
        configuration.backend = .council(councilConfiguration)
        configuration.api = RheaAPISettings(enabled: true, keyDigests: [APIKeyFile.digest(of: Self.servedAPIKey)], perMinute: 10_000, perDay: 100_000)
        let app = try await RelayApplication.build(configuration: configuration, registry: PrometheusCollectorRegistry(), logger: Logger(label: "served"))
        let httpClient = httpClient
        return try await app.test(.live) { client in
            let port = try #require(client.port)
            let rhea = RheaTribunalClient(
                configuration: RheaTribunalConfiguration(baseURL: "http://127.0.0.1:\(port)", apiKey: Self.servedAPIKey, retry: .none),
                transport: HTTPTransport(client: httpClient), logger: Logger(label: "test"))
            return try await body(rhea)
        }
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
            return BackendUnderTest(kind: kind, tribunal: client, rhea: fake, councilServers: [:], councilConfiguration: nil, httpClient: httpClient)
        case .council, .servedAPI:
            var servers: [Tier: [FakeOpenAIServer]] = [:]
            var models: [CouncilModel] = []
            for tier in Tier.allCases {
                for index in 1...3 {
                    let server = try await FakeOpenAIServer.start(persona: .judging(.agree))
                    servers[tier, default: []].append(server)
                    models.append(CouncilModel(name: "\(tier.rawValue)-\(index)", baseURL: server.url, model: "fake-\(tier.rawValue)-\(index)", tier: tier))
                }
            }
            let configuration = CouncilConfiguration(models: models, deadline: .seconds(30))
            // As `serve` builds it: learning from the ledger of the relay it serves (set by `withRelay`).
            let ledger = LedgerSource()
            let council = Council(
                configuration: configuration, client: OpenAICompatibleClient(transport: HTTPTransport(client: httpClient), logger: logger), logger: logger,
                reliability: CouncilReliability(
                    weights: [:], history: { try await ledger.store?.recentLedger(limit: CouncilReliability.historyLimit) ?? [] },
                    stamps: { try await ledger.store?.ledgerStamps(limit: CouncilReliability.historyLimit) ?? [] }))
            return BackendUnderTest(
                kind: kind, tribunal: council, rhea: nil, councilServers: servers, councilConfiguration: configuration, httpClient: httpClient,
                ledger: ledger)
        }
    }

    /// Agreeing tiers score ≥ 90%; disagreeing ones about 69% (Rhea: 50%), below an 80% gate.
    func setTier(_ tier: Tier, agreeing: Bool) async {
        if let rhea {
            await rhea.setAgreement(agreeing ? 0.9 : 0.5, forTier: tier)
        }
        if let servers = councilServers[tier] {
            for (index, server) in servers.enumerated() {
                // Not agreeing: true, partly and false, one each — no combination of the votes,
                // counted or learned, is sure of a verdict.
                server.setPersona(agreeing ? .judging(.agree) : [.judging(.agree), .judging(.partly), .judging(.disagree)][index % 3])
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
    static func withRelay<T: Sendable>(_ kind: BackendKind, _ body: @escaping @Sendable (Relay, BackendUnderTest) async throws -> T) async throws -> T {
        let backend = try await start(kind)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parity-\(UUID().uuidString).sqlite").path
        let store = try await SQLiteStore.open(path: path)
        backend.ledger?.store = store
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        do {
            let result = try await backend.serving { tribunal in try await body(Relay(tribunal: tribunal, store: store), backend) }
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
    /// Sends one command line as user `ada` of team `t`, its admin (chains are saved by admins).
    func send(_ text: String, repliedTo: String? = nil) async -> Reply {
        await handle(Event(platform: "test", team: "t", channel: "c", user: "ada", text: text, repliedTo: repliedTo, isAdmin: true)) ?? .error("duplicate")
    }
}

/// The store a directly used council learns from, known only once the relay's store is open.
final class LedgerSource: Sendable {
    private let box = Mutex<(any Store)?>(nil)
    var store: (any Store)? {
        get { box.withLock { $0 } }
        set { box.withLock { $0 = newValue } }
    }
}
