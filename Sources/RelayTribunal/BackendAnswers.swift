import Foundation
public import RelayCore

/// The backends' answers read from raw bytes, the way the clients read them: the Rhea
/// gateway's `/keyboard/quick`, `/dialog`, `/tribunal` and `/health` bodies, and an
/// OpenAI-compatible chat completion with the verdict in it.
///
/// The clients decode their 2xx bodies through `decode` and map them with the same functions,
/// so the fuzzer (`rhea-fuzz`, `Sources/RelayFuzz`) drives exactly the code that reads
/// untrusted answers in production, without a network in between.
public enum BackendAnswers {
    /// A `/keyboard/quick` answer.
    public static func quick(_ body: [UInt8]) throws -> QuickResult {
        let response = try RheaWire.decode(RheaWire.QuickResponse.self, from: body)
        return try QuickMapping.result(from: response, measured: .seconds(1), url: "fuzz")
    }

    /// A `/dialog` answer.
    public static func dialog(_ body: [UInt8]) throws -> ConsensusResult {
        let response = try RheaWire.decode(RheaWire.DialogResponse.self, from: body)
        return try ConsensusMapping.result(from: response, measured: .seconds(1), url: "fuzz")
    }

    /// A `/tribunal` answer to a request for `k` models.
    public static func tribunal(_ body: [UInt8], k: Int = 3) throws -> ConsensusResult {
        let response = try RheaWire.decode(RheaWire.TribunalResponse.self, from: body)
        return try ConsensusMapping.result(from: response, k: k, measured: .seconds(1), url: "fuzz")
    }

    /// A `/health` answer.
    public static func health(_ body: [UInt8]) throws -> BackendHealth {
        health(from: try RheaWire.decode(RheaWire.HealthResponse.self, from: body), endpoint: "fuzz")
    }

    /// A chat completion's text and, read from it, the model's verdict; nil when the body is
    /// not an answer.
    public static func chatCompletionVerdict(_ body: [UInt8]) -> ParsedVerdict? {
        guard case .text(let text, _, _) = OpenAIWire.answer(from: body) else { return nil }
        return VerdictParser.parse(text)
    }

    /// What `/health` reports: its status, and the provider and model counts when they are
    /// plausible (a count outside `0...10_000` is left out and reported).
    static func health(from response: RheaWire.HealthResponse, endpoint: String) -> BackendHealth {
        let counts = 0...10_000
        let available = UntrustedNumber.checked(response.providersAvailable, in: counts, source: "rhea", field: "providers_available")
        let total = UntrustedNumber.checked(response.providersTotal, in: counts, source: "rhea", field: "providers_total")
        let models = UntrustedNumber.checked(response.totalModels, in: counts, source: "rhea", field: "total_models")
        var details: [String] = []
        if let available, let total {
            details.append("\(available)/\(total) providers")
        }
        if let models {
            details.append("\(models) models")
        }
        let status = response.status?.trimmingWhitespace ?? ""
        return BackendHealth(endpoint: endpoint, status: status.isEmpty ? "ok" : status, detail: details.isEmpty ? nil : details.joined(separator: ", "))
    }
}
