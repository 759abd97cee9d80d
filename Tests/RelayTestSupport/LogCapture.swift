public import Logging
import Synchronization

/// Keeps every log line (level, message and metadata) in memory, for assertions such as
/// "no secret is ever logged".
public final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// A logger at trace level that writes here.
    public var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    public var text: String { lines.withLock { $0.joined(separator: "\n") } }

    fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
            capture.append("\(event.level) \(event.message) \(all)")
        }
    }
}
