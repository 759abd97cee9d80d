import RelayCore

/// Counts backend calls by outcome (`relay_backend_calls_total`) around any backend.
struct MeteredTribunal: Tribunal {
    let base: any Tribunal

    init(_ base: any Tribunal) { self.base = base }

    func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult {
        do throws(TribunalError) {
            let result = try await base.quick(request)
            RelayMetrics.backendCall("quick", outcome: "ok")
            return result
        } catch {
            RelayMetrics.backendCall("quick", outcome: error.metricLabel)
            throw error
        }
    }

    func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        do throws(TribunalError) {
            let result = try await base.consensus(request)
            RelayMetrics.backendCall("consensus", outcome: "ok")
            return result
        } catch {
            RelayMetrics.backendCall("consensus", outcome: error.metricLabel)
            throw error
        }
    }

    func health() async throws(TribunalError) -> BackendHealth {
        try await base.health()
    }

    func councilReport() async -> CouncilReport? {
        await base.councilReport()
    }
}

extension TribunalError {
    /// A bounded label for metrics: the error's kind, never its text.
    var metricLabel: String {
        switch self {
        case .unreachable: "unreachable"
        case .timedOut: "timed_out"
        case .unauthorized: "unauthorized"
        case .paymentRequired: "payment_required"
        case .rateLimited: "rate_limited"
        case .rejected: "rejected"
        case .serverError: "server_error"
        case .providerFailed: "provider_failed"
        case .malformedResponse: "malformed_response"
        case .notConfigured: "not_configured"
        case .reported(let report): report.error.metricLabel
        }
    }
}
