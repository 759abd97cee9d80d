import Foundation
import Metrics
import RelayCore

/// Every metric the relay records, named in one place. Label values are bounded: command
/// names come from the command table (custom commands are "custom"), outcomes from small enums.
enum RelayMetrics {
    /// Commands handled, by command name and outcome (`result`, `error`, `info`, `duplicate`).
    static func command(_ name: String, outcome: String) {
        Counter(label: "relay_commands_total", dimensions: [("command", name), ("outcome", outcome)]).increment()
    }

    /// Time from an event's arrival to its reply being written to the outbox.
    static func runDuration(_ duration: Duration, command: String) {
        Metrics.Timer(label: "relay_run_duration_seconds", dimensions: [("command", command)], preferredDisplayUnit: .seconds)
            .record(duration: duration)
    }

    /// Backend calls, by call (`quick`, `consensus`, `health`) and outcome (`ok` or the error kind).
    static func backendCall(_ call: String, outcome: String) {
        Counter(label: "relay_backend_calls_total", dimensions: [("call", call), ("outcome", outcome)]).increment()
    }

    /// What a model call used: tokens by model and direction (`in`, `out`), and its cost in US
    /// dollars where the model has a price. `model` is a configured name or one catch-all label,
    /// never a name a backend sent (`MeteredTribunal`), so the labels stay bounded.
    static func modelUsage(model: String, _ usage: ModelUsage) {
        Counter(label: "relay_model_tokens_total", dimensions: [("model", model), ("direction", "in")]).increment(by: usage.tokensIn)
        Counter(label: "relay_model_tokens_total", dimensions: [("model", model), ("direction", "out")]).increment(by: usage.tokensOut)
        if let cost = usage.cost, cost > 0, cost.isFinite {
            FloatingPointCounter(label: "relay_model_cost_usd_total", dimensions: [("model", model)]).increment(by: cost)
        }
    }

    /// Delivery attempts, by platform and outcome (`sent`, `part_sent`, `rate_limited`, `retry`, `failed`).
    static func delivery(platform: String, outcome: String) {
        Counter(label: "relay_outbox_deliveries_total", dimensions: [("platform", platform), ("outcome", outcome)]).increment()
    }

    /// Pending outbox entries.
    static func outboxDepth(_ depth: Int) {
        Gauge(label: "relay_outbox_depth").record(depth)
    }

    /// Accepted commands waiting in the inbox, and runs in flight.
    static func inbox(waiting: Int, running: Int) {
        Gauge(label: "relay_inbox_depth").record(waiting)
        Gauge(label: "relay_runs_in_flight").record(running)
    }

    /// Time an accepted command waited in the inbox before its run started.
    static func inboxWait(_ seconds: TimeInterval) {
        Metrics.Timer(label: "relay_inbox_wait_seconds", preferredDisplayUnit: .seconds).recordSeconds(max(0, seconds))
    }

    /// Retention passes (outbox and history purges), by outcome (`ok`, `failed`).
    static func retentionPass(outcome: String) {
        Counter(label: "relay_retention_passes_total", dimensions: [("outcome", outcome)]).increment()
    }
}
