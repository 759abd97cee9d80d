import Foundation
import RelayCore

extension Duration {
    public var ms: String { String(format: "%.1f ms", seconds * 1000) }
}

/// The `p`-th percentile (0…1) of `values`, nearest rank; nan when empty.
public func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))]
}

public func ms(_ seconds: Double) -> String { seconds.isNaN ? "-" : String(format: "%.1f ms", seconds * 1000) }
public func mib(_ kib: Int?) -> String { kib.map { String(format: "%.0f MB", Double($0) * 1024 / 1_000_000) } ?? "?" }

/// The CPU's model and how many cores this process may use, for a report's first line.
public func benchMachine() -> String {
    let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
    let model =
        cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }?.split(separator: ":").last?
        .trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
    return "\(model), \(ProcessInfo.processInfo.activeProcessorCount) cores"
}
