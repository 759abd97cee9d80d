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

    /// Runs every time a metric is looked up (each request, each command): names that are
    /// already safe, the usual case, are returned without walking their characters.
    private static func sanitize(_ name: String) -> String {
        let safe = name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
        }
        if safe { return name }
        return String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    }
}
