import AsyncHTTPClient
public import Logging
public import RelayCore
public import RelayHTTP
public import RelayPipeline
import RelayStore
import RelayTribunal

/// What configuration opens: the store, the one outbound HTTP transport and the backend on it.
/// `shutdown()` releases them; every entry point (CLI, server, tests) opens them the same way.
public final class RelayRuntime: Sendable {
    public let configuration: AppConfiguration
    public let store: any Store
    /// The backend every command uses, as configured (`tribunal.backend`).
    public let tribunal: any Tribunal
    /// The shared outbound HTTP transport; its client is shut down by `shutdown()`.
    public let transport: HTTPTransport
    /// Speech to text for voice notes, on the same transport; nil when `transcription` is unset.
    public let transcriber: (any Transcriber)?

    private init(configuration: AppConfiguration, store: any Store, tribunal: any Tribunal, transport: HTTPTransport, transcriber: (any Transcriber)?) {
        self.configuration = configuration
        self.store = store
        self.tribunal = tribunal
        self.transport = transport
        self.transcriber = transcriber
    }

    public static func start(_ configuration: AppConfiguration, logger: Logger) async throws -> RelayRuntime {
        let store: any Store =
            if let url = configuration.storeURL {
                try await PostgresStore.open(url: url, logger: logger)
            } else {
                try await SQLiteStore.open(path: configuration.storePath, logger: logger)
            }
        let transport = HTTPTransport(client: HTTPTransport.makeClient(maxConnectionsPerHost: configuration.http.outboundConnectionsPerHost))
        let tribunal: any Tribunal =
            switch configuration.backend {
            case .rhea: RheaTribunalClient(configuration: configuration.tribunal, transport: transport, logger: logger)
            case .council(let council):
                Council(
                    configuration: council, client: OpenAICompatibleClient(transport: transport, logger: logger), logger: logger,
                    reliability: CouncilReliability(
                        weights: Dictionary(council.models.map { ($0.name, $0.weight) }, uniquingKeysWith: { first, _ in first }),
                        history: { [store] in try await store.recentLedger(limit: CouncilReliability.historyLimit) },
                        stamps: { [store] in try await store.ledgerStamps(limit: CouncilReliability.historyLimit) }))
            }
        let transcriber = configuration.transcription.map { OpenAITranscriptionClient(configuration: $0, transport: transport, logger: logger) }
        return RelayRuntime(configuration: configuration, store: store, tribunal: tribunal, transport: transport, transcriber: transcriber)
    }

    /// A relay over this runtime's store and backend, for the terminal and one-shot commands
    /// (`serve` builds its own, with metrics, in `RelayApplication`).
    public func makeRelay() -> Relay {
        Relay(tribunal: tribunal, store: store, configuration: configuration.relay, transcriber: transcriber)
    }

    /// Where the backend lives, for start-up messages.
    public var backendDescription: String { Self.describeBackend(configuration) }

    /// Where the configured backend lives, in words.
    public static func describeBackend(_ configuration: AppConfiguration) -> String {
        switch configuration.backend {
        case .rhea:
            "the Rhea Tribunal at \(MaskedURL.display(configuration.tribunal.baseURL))"
                + (configuration.tribunal.hasCredentials ? "" : " (no credentials: /tribunal goes through /dialog)")
        case .council(let council) where configuration.backendSource == .localModel:
            "the local model \(council.models.first?.model ?? LocalModel.councilName) at \(MaskedURL.display(configuration.localModelURL))"
                + " (no backend is configured; set TRIBUNAL_URL or the council to use another)"
        case .council(let council):
            "the council of \(council.summary)"
        }
    }

    public func shutdown() async {
        try? await store.close()
        try? await transport.client.shutdown()
    }
}
