public import RelayCore

/// Counts backend calls by outcome (`relay_backend_calls_total`) around any backend.
public struct MeteredTribunal: Tribunal {
    let base: any Tribunal

    public init(_ base: any Tribunal) { self.base = base }

    public func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult {
        do throws(TribunalError) {
            let result = try await base.quick(request)
            RelayMetrics.backendCall("quick", outcome: "ok")
            return result
        } catch {
            RelayMetrics.backendCall("quick", outcome: error.label)
            throw error
        }
    }

    public func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        do throws(TribunalError) {
            let result = try await base.consensus(request)
            RelayMetrics.backendCall("consensus", outcome: "ok")
            return result
        } catch {
            RelayMetrics.backendCall("consensus", outcome: error.label)
            throw error
        }
    }

    public func health() async throws(TribunalError) -> BackendHealth {
        try await base.health()
    }

    public func councilReport() async -> CouncilReport? {
        await base.councilReport()
    }
}

/// A backend whose failures are reported (id minted, details logged) as they leave it, for one
/// event's run: every path that turns a failure into a reply — a command, a chain block, a
/// verify gate — then shows the id and nothing more.
struct ReportingTribunal: Tribunal {
    let base: any Tribunal
    let reporting: FailureReporting
    let event: Event
    /// The run's record so far: its fact-checks go with each consensus request until written.
    let recorder: RunRecorder

    func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult {
        do throws(TribunalError) {
            return try await base.quick(request)
        } catch {
            throw reporting.report(error, call: "quick", event: event)
        }
    }

    func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        do throws(TribunalError) {
            var request = request
            request.unwrittenFactChecks = recorder.current.ledger.reversed() + request.unwrittenFactChecks
            return try await base.consensus(request)
        } catch {
            throw reporting.report(error, call: "consensus", event: event)
        }
    }

    func health() async throws(TribunalError) -> BackendHealth {
        try await base.health()
    }

    func councilReport() async -> CouncilReport? {
        await base.councilReport()
    }
}
