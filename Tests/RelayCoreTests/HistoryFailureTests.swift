import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Testing

/// Why a run failed is kept with it (issue 45: the console's overview counts failures by it):
/// the backend's failure by its label; nothing for a run that succeeded. (A command refused
/// before it runs — no input, no rights — keeps no history at all.)
@Suite("Relay: why a run failed, kept in its history")
struct HistoryFailureTests {
    @Test func aBackendFailureIsKeptByItsLabel() async throws {
        let tribunal = ScriptedTribunal(failure: { call in
            if case .quick(let request) = call, request.text.contains("slow") { return .timedOut(url: "http://x", after: .seconds(15)) }
            return nil
        })
        try await RelayHarness.with(tribunal: tribunal) { relay in
            #expect(await relay.send("/fix slow text", user: "bob").kind == .error)
            #expect(await relay.send("/fix teh cat", user: "bob").kind == .result)
            let history = try await relay.store.history(team: "t", user: "bob", limit: 10)
            #expect(history.map(\.failure) == [nil, "timed_out"], "\(history.map { ($0.command, $0.succeeded, $0.failure) })")
        }
    }
}
