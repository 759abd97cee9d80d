import AsyncHTTPClient
public import Logging
public import RelayCore
import RelayStore
import RelayTribunal

/// The relay built from configuration: its backend, its store and the shared HTTP client.
/// `shutdown()` releases them; every entry point (CLI, server, tests) builds it the same way.
public final class RelayRuntime: Sendable {
    public let relay: Relay
    public let configuration: AppConfiguration
    let httpClient: HTTPClient
    let store: any Store

    private init(relay: Relay, configuration: AppConfiguration, httpClient: HTTPClient, store: any Store) {
        self.relay = relay
        self.configuration = configuration
        self.httpClient = httpClient
        self.store = store
    }

    public static func start(_ configuration: AppConfiguration, logger: Logger) async throws -> RelayRuntime {
        let store = try await SQLiteStore.open(path: configuration.storePath, logger: logger)
        let httpClient = RheaTribunalClient.makeHTTPClient()
        let tribunal: any Tribunal =
            switch configuration.backend {
            case .rhea: RheaTribunalClient(configuration: configuration.tribunal, httpClient: httpClient, logger: logger)
            case .council(let council): Council(configuration: council, client: OpenAICompatibleClient(httpClient: httpClient, logger: logger), logger: logger)
            }
        let relay = Relay(tribunal: tribunal, store: store, configuration: configuration.relay)
        return RelayRuntime(relay: relay, configuration: configuration, httpClient: httpClient, store: store)
    }

    /// Where the backend lives, for start-up messages.
    public var backendDescription: String { Self.describeBackend(configuration) }

    /// Where the configured backend lives, in words.
    public static func describeBackend(_ configuration: AppConfiguration) -> String {
        switch configuration.backend {
        case .rhea:
            "the Rhea Tribunal at \(configuration.tribunal.baseURL)"
                + (configuration.tribunal.hasCredentials ? "" : " (no credentials: /tribunal goes through /dialog)")
        case .council(let council):
            "the council of \(council.summary)"
        }
    }

    public func shutdown() async {
        try? await store.close()
        try? await httpClient.shutdown()
    }
}
