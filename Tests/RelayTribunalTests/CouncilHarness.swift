import AsyncHTTPClient
import Logging
import RelayCore
import RelayHTTP
import RelayTestSupport
import RelayTribunal

/// A council over fake OpenAI-compatible servers on 127.0.0.1, one server per model.
struct CouncilHarness {
    struct Member {
        var name: String
        var tier: Tier
        var persona: FakeOpenAIPersona
        var weight: Double = 1
        var timeout: Duration? = nil
    }

    let council: Council
    let servers: [String: FakeOpenAIServer]

    static func with<T>(
        _ members: [Member], quorum: Int = 2, deadline: Duration = .seconds(30), chairman: String? = nil,
        clock: any RelayClock = SystemClock(), logger: Logger = Logger(label: "test"),
        _ body: (CouncilHarness) async throws -> T
    ) async throws -> T {
        var servers: [String: FakeOpenAIServer] = [:]
        var models: [CouncilModel] = []
        let httpClient = HTTPTransport.makeClient()
        do {
            for member in members {
                let server = try await FakeOpenAIServer.start(persona: member.persona)
                servers[member.name] = server
                models.append(
                    CouncilModel(
                        name: member.name, baseURL: server.url, model: "fake-\(member.name)", tier: member.tier, weight: member.weight, timeout: member.timeout)
                )
            }
            let configuration = CouncilConfiguration(models: models, quorum: quorum, deadline: deadline, defaultTimeout: .seconds(30), chairman: chairman)
            let council = Council(
                configuration: configuration, client: OpenAICompatibleClient(transport: HTTPTransport(client: httpClient), logger: logger),
                logger: logger, clock: clock)
            let result = try await body(CouncilHarness(council: council, servers: servers))
            for server in servers.values { await server.stop() }
            try await httpClient.shutdown()
            return result
        } catch {
            for server in servers.values { await server.stop() }
            try? await httpClient.shutdown()
            throw error
        }
    }
}
