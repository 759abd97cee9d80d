import AsyncHTTPClient
import Foundation
import Logging
import RelayCore
import RelayHTTP
import RelayServer
import RelayTestSupport
import RelayTribunal
import Synchronization
import Testing

/// The council against a real OpenAI-compatible server: llama.cpp with a 135M model
/// (`LocalModelServer`: the one `.ci/run` starts, or started here with `scripts/local-model`).
/// It checks the wire format and the end-to-end path, never answer quality.
@Suite("Council against a real local model server", .serialized)
struct LocalModelTests {
    func withCouncil<T>(_ body: (Council) async throws -> T) async throws -> T {
        let baseURL = try await LocalModelServer.url()
        let httpClient = HTTPTransport.makeClient()
        // Two council members on the one server: it serves one request at a time, so timeouts are generous.
        let models = ["local-a", "local-b"].map {
            CouncilModel(name: $0, baseURL: baseURL, model: LocalModelServer.model, tier: .cheap, timeout: .seconds(120))
        }
        let council = Council(
            configuration: CouncilConfiguration(models: models, quorum: 1, deadline: .seconds(240), defaultTimeout: .seconds(120)),
            client: OpenAICompatibleClient(transport: HTTPTransport(client: httpClient), logger: Logger(label: "test")), logger: Logger(label: "test"))
        do {
            let result = try await body(council)
            try await httpClient.shutdown()
            return result
        } catch {
            try? await httpClient.shutdown()
            throw error
        }
    }

    @Test func quickGetsARealCompletion() async throws {
        try await withCouncil { council in
            let result = try await council.quick(QuickRequest(action: .translate(to: Language(code: "fr", name: "French")), text: "Good morning", tier: .cheap))
            #expect(!result.text.isEmpty)
            #expect(result.model == "local-a")
        }
    }

    /// llama.cpp's server streams (`stream: true`, server-sent events): the text arrives in
    /// pieces, each the one before grown, and the whole answer is the last of them.
    @Test func quickStreamsARealCompletionInPieces() async throws {
        try await withCouncil { council in
            let seen = Mutex<[String]>([])
            let request = QuickRequest(action: .explain, text: "Why is the sky blue? Answer in two sentences.", tier: .cheap)
            let result = try await council.quick(request) { text in seen.withLock { $0.append(text) } }
            let texts = seen.withLock { $0 }
            #expect(texts.count >= 2, "the answer came in pieces: \(texts)")
            for (earlier, later) in zip(texts, texts.dropFirst()) { #expect(later.hasPrefix(earlier), "\(earlier) → \(later)") }
            let last = try #require(texts.last)
            #expect(result.text.trimmingCharacters(in: .whitespacesAndNewlines) == last.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(result.model == "local-a")
        }
    }

    @Test func consensusRunsEndToEnd() async throws {
        try await withCouncil { council in
            let result = try await council.consensus(ConsensusRequest(claim: "Paris is the capital of France.", k: 2, tier: .cheap))
            #expect(result.asked == 2)
            #expect(result.answered >= 1)
            #expect((0...1).contains(result.agreement))
            #expect(result.models.allSatisfy { $0.hasPrefix("local-") })
        }
    }

    /// The sample chains a newcomer imports (bots/examples/chains.txt), on the local model as a
    /// first run configures it (one model at the cheap tier): each runs to its end, or stops
    /// with a reason in one step — never re-asking the one model until it happens to agree.
    @Test func everySampleChainRunsToItsEndOrStopsWithAReasonInOneStep() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let samples = try String(contentsOf: root.appendingPathComponent("bots/examples/chains.txt"), encoding: .utf8)
        guard case .chain(.importDefinitions(let definitions)) = try CommandParser().parse("/chain import\n" + samples).kind else {
            Issue.record("bots/examples/chains.txt does not import")
            return
        }
        #expect(definitions.count >= 4)
        let chains = try definitions.map { (name: $0.name, chain: try ChainParser().parse($0.source)) }
        var configuration = LocalModel.council(baseURL: try await LocalModelServer.url(), modelID: LocalModelServer.model)
        // The one server answers one request at a time, beside the other suites.
        configuration.defaultTimeout = .seconds(120)
        configuration.deadline = .seconds(240)
        let httpClient = HTTPTransport.makeClient()
        let council = Council(
            configuration: configuration, client: OpenAICompatibleClient(transport: HTTPTransport(client: httpClient), logger: Logger(label: "test")),
            logger: Logger(label: "test"))
        let context = RunContext(
            input: "the meeting is moved to thursday, bring you're notes", thread: "ada: The meeting moves to Thursday.\nbob: Bring your notes, please.")
        for (name, chain) in chains {
            let outcome = await ChainRunner(tribunal: council).run(chain, context: context)
            switch outcome.status {
            case .completed:
                #expect(!outcome.text.isEmpty, "\(name)")
            case .stopped(let why):
                #expect(why.hasPrefix("Stopped at block"), "\(name): \(why)")
                #expect(!outcome.log.contains { $0.contains("escalating") }, "\(name): \(outcome.log)")
            case .failed(let error):
                Issue.record("\(name) failed: \(error)")
            }
            // Each text block and each verify was asked once: nothing was retried.
            let textBlocks = chain.blocks.filter(\.transformsText).count
            let verifies = chain.blocks.filter { if case .verify = $0 { true } else { false } }.count
            #expect(outcome.modelCalls <= textBlocks + verifies * context.k, "\(name): \(outcome.log)")
            if chain.blocks.contains(where: { if case .verify = $0 { true } else { false } }) {
                #expect(outcome.log.contains { $0.contains("a self-check: local judged its own text") }, "\(name): \(outcome.log)")
            }
        }
        try await httpClient.shutdown()
    }
}
