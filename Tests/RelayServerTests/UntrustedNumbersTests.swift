import Foundation
import Hummingbird
import HummingbirdTesting
import Prometheus
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import Testing

/// Issue 9, point 5, through the running server: a gateway whose numbers are absurd cannot put
/// them into a Slack reply, and every replaced value is counted in
/// `relay_untrusted_values_clamped_total{source,field}`.
@Suite("Untrusted numbers, through the server")
struct UntrustedNumbersTests {
    /// The counter's value for one field, as `/metrics` would show it (0 when never counted).
    static func clampedCount(field: String) -> Double {
        var bytes: [UInt8] = []
        TestMetrics.registry.emit(into: &bytes)
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first {
            $0.hasPrefix("relay_untrusted_values_clamped_total{") && $0.contains(#"field="\#(field)""#) && $0.contains(#"source="rhea""#)
        }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    @Test func absurdGatewayNumbersNeverReachTheReply() async throws {
        // Three models answered; everything numeric around them is broken or hostile.
        let hostile = """
            {"consensus": "The Eiffel Tower is in Paris.", "agreement_score": 1e300, "confidence": -4,
             "models_responded": -3, "models_queried": 9223372036854775807, "elapsed_s": -5,
             "responses": [
               {"model": "a", "provider": "p", "text": "Paris.", "latency_s": 1e308},
               {"model": "b", "provider": "p", "text": "Paris, not Berlin.", "latency_s": -1},
               {"model": "c", "provider": "p", "text": "Paris.", "latency_s": 0.2}]}
            """
        let before = ["agreement_score", "models_responded", "elapsed_s"].map(Self.clampedCount)
        try await SlackFakes.with { fakes in
            await fakes.tribunal.script(.body(hostile), path: FakeRheaTribunal.tribunalPath)
            try await fakes.withRelay(fakes.configuration()) { relay in
                let responseURL = relay.slack.makeResponseURL()
                #expect(try await relay.slashCommand("/tribunal", text: "The Eiffel Tower is in Berlin", responseURL: responseURL).status == .ok)
                let answer = try #require(await relay.slack.next(responseURL: responseURL))
                let shown = try #require(answer.body).shownTexts.joined(separator: "\n")
                #expect(shown.contains("The Eiffel Tower is in Paris."), "\(shown)")
                // Agreement clamped to 100%; the count read from the responses, not from -3.
                #expect(shown.contains("Agreement 100%"), "\(shown)")
                #expect(shown.contains("3/3 models"), "\(shown)")
                for absurd in ["1e300", "1e+300", "-3", "-5", "9223372036854775807", "-4", "inf", "nan"] {
                    #expect(!shown.lowercased().contains(absurd), "\(absurd) reached the reply: \(shown)")
                }
            }
        }
        let after = ["agreement_score", "models_responded", "elapsed_s"].map(Self.clampedCount)
        for (field, (old, new)) in zip(["agreement_score", "models_responded", "elapsed_s"], zip(before, after)) {
            #expect(new >= old + 1, "\(field) was not counted (\(old) → \(new))")
        }
    }

    @Test func anAbsurdDialogShareStillGivesASaneAnsweredFooter() async throws {
        let hostile = #"{"reply": "Both models agree.", "agreement_score": 1e300, "elapsed_s": 1e300}"#
        try await SlackFakes.with { fakes in
            await fakes.tribunal.script(.body(hostile), path: FakeRheaTribunal.dialogPath)
            var configuration = fakes.configuration()
            configuration.tribunal.token = nil  // no credentials: consensus goes to /dialog
            try await fakes.withRelay(configuration) { relay in
                let responseURL = relay.slack.makeResponseURL()
                #expect(try await relay.slashCommand("/tribunal", text: "Water is wet", responseURL: responseURL).status == .ok)
                let answer = try #require(await relay.slack.next(responseURL: responseURL))
                let shown = try #require(answer.body).shownTexts.joined(separator: "\n")
                // Before clamping, 1e300 × 2 models traps converting to Int; now: 100%, 2/2.
                #expect(shown.contains("Both models agree."), "\(shown)")
                #expect(shown.contains("2/2"), "\(shown)")
                #expect(!shown.contains("1e+300") && !shown.contains("1e300"), "\(shown)")
            }
        }
    }
}
