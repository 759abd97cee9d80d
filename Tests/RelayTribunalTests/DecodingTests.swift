import Foundation
import RelayCore
import Testing

@testable import RelayTribunal

@Suite("tolerant decoding and mapping (no network)")
struct DecodingTests {
    func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    @Test func unknownFieldsAndWrongTypesReadAsAbsent() throws {
        let response = try decode(
            RheaWire.TribunalResponse.self,
            """
            {"consensus": "ok", "agreement_score": "high", "confidence": null, "models_responded": 2,
             "surprise": {"nested": [1, 2, {"x": null}]}, "stance_summary": {"a/b": "affirmative", "c/d": null},
             "divergence_points": ["[c/d only] No.", 42], "responses": [{"model": "b", "provider": "a", "text": "Yes."}, 7]}
            """)
        #expect(response.consensus == "ok")
        #expect(response.agreementScore == nil)
        #expect(response.confidence == nil)
        #expect(response.modelsResponded == 2)
        #expect(response.stanceSummary?["a/b"]?.stance == "affirmative")
        #expect(response.divergencePoints == ["[c/d only] No."])
        #expect(response.responses?.count == 1)
        #expect(response.responses?.first?.displayName == "a/b")
    }

    @Test func emptyObjectsDecode() throws {
        _ = try decode(RheaWire.QuickResponse.self, "{}")
        _ = try decode(RheaWire.DialogResponse.self, "{}")
        _ = try decode(RheaWire.HealthResponse.self, #"{"status": "ok", "execution_profile": "safe_cheap"}"#)
        #expect(throws: (any Error).self) { try decode(RheaWire.QuickResponse.self, "[1, 2]") }
    }

    @Test func quickWithoutTextIsMalformed() throws {
        let response = try decode(RheaWire.QuickResponse.self, #"{"model": "m"}"#)
        #expect(throws: TribunalError.self) { try QuickMapping.result(from: response, measured: .seconds(1), url: "u") }
    }

    @Test func quickElapsedFallsBackToMeasuredTimeAndEmptyModelToNil() throws {
        let response = try decode(RheaWire.QuickResponse.self, #"{"text": " Hi ", "model": ""}"#)
        let result = try QuickMapping.result(from: response, measured: .milliseconds(1500), url: "u")
        #expect(result == QuickResult(text: "Hi", model: nil, elapsed: .milliseconds(1500)))
    }

    @Test func fastAPIDetailsBecomeOneLine() {
        let array = Array(
            #"{"detail":[{"type":"string_too_long","loc":["body","prompt"],"msg":"String should have at most 10000 characters","input":"secret prompt"},{"loc":["body","k"],"msg":"Input should be a valid integer"}]}"#
                .utf8)
        let readable = ErrorDetail.readable(from: array, status: 422)
        #expect(readable == "prompt: String should have at most 10000 characters; k: Input should be a valid integer")
        #expect(!readable.contains("secret prompt"))
        #expect(ErrorDetail.readable(from: Array(#"{"detail":"Invalid API key"}"#.utf8), status: 401) == "Invalid API key")
        #expect(ErrorDetail.readable(from: Array("<html>Bad gateway</html>".utf8), status: 502) == "HTTP 502")
        #expect(ErrorDetail.readable(from: [], status: 503) == "HTTP 503")
        #expect(ErrorDetail.readable(from: Array("upstream down".utf8), status: 503) == "upstream down")
    }

    @Test func dissentReasonFallsBackToTheFirstSentence() throws {
        let responses = try decode(
            [RheaWire.ModelResponse].self,
            """
            [{"model": "m1", "provider": "p", "text": "Yes. It is."},
             {"model": "m2", "provider": "p", "text": "Yes, clearly."},
             {"model": "m3", "provider": "p", "text": "No! The data says otherwise. More text."}]
            """)
        let stances = try decode(
            [String: RheaWire.Stance].self,
            #"{"p/m1": {"stance": "affirmative"}, "p/m2": {"stance": "affirmative"}, "p/m3": {"stance": "negative"}}"#)
        let dissent = DissentFinder.dissent(stances: stances, divergencePoints: ["[p/m1, p/m2] Both agree."], answering: responses)
        #expect(dissent == [Dissent(model: "p/m3", reason: "No!")])

        let viaDivergence = DissentFinder.dissent(
            stances: stances, divergencePoints: ["[p/m3 only] The data says otherwise."], answering: responses)
        #expect(viaDivergence.first?.reason == "The data says otherwise.")
    }

    @Test func longReasonsAreShortened() {
        let long = String(repeating: "word ", count: 60)
        let short = DissentFinder.shorten(long)
        #expect(short.count <= DissentFinder.maxReasonLength)
        #expect(short.hasSuffix("…"))
        #expect(DissentFinder.firstSentence(of: "Version 2.5 is out. Next.") == "Version 2.5 is out.")
    }

    @Test func retryDelaysGrowExponentiallyWithinJitterBounds() {
        let policy = RetryPolicy(attempts: 5, baseDelay: .milliseconds(250), maxDelay: .seconds(1))
        #expect(policy.delay(afterAttempt: 1, random: 0) == .milliseconds(125))
        #expect(policy.delay(afterAttempt: 1, random: 1) == .milliseconds(250))
        #expect(policy.delay(afterAttempt: 2, random: 1) == .milliseconds(500))
        #expect(policy.delay(afterAttempt: 3, random: 1) == .seconds(1))
        #expect(policy.delay(afterAttempt: 9, random: 1) == .seconds(1))
        for attempt in 1...4 {
            let delay = policy.delay(afterAttempt: attempt)
            #expect(delay > .zero && delay <= .seconds(1))
        }
        #expect(RetryPolicy(attempts: 0).attempts == 1)
    }

    @Test func errorTextOnlyCountsAtTheStart() {
        #expect(ProviderFailure.detail(in: "Error: boom") == "boom")
        #expect(ProviderFailure.detail(in: "  Error:") == "unknown error")
        #expect(ProviderFailure.detail(in: "No Error: here") == nil)
    }
}
