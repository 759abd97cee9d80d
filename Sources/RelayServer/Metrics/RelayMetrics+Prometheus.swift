public import Prometheus

extension PrometheusMetricsFactory {
    /// The factory `serve` bootstraps swift-metrics with: Prometheus-safe names (Hummingbird's
    /// `hb.requests` becomes `hb_requests`) and run-latency buckets sized for AI answers.
    public static func relay(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.nameAndLabelSanitizer = { name, labels in
            (sanitize(name), labels.map { (sanitize($0.0), $0.1) })
        }
        factory.durationHistogramBuckets["relay_run_duration_seconds"] = [
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
            .seconds(5), .seconds(10), .seconds(20), .seconds(30), .seconds(60), .seconds(120),
        ]
        return factory
    }

    private static func sanitize(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    }
}
