import Foundation

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var ms: String { String(format: "%.1f ms", seconds * 1000) }
}

/// The `p`-th percentile (0…1) of `values`, nearest rank; nan when empty.
func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))]
}

func ms(_ seconds: Double) -> String { seconds.isNaN ? "-" : String(format: "%.1f ms", seconds * 1000) }
func mib(_ kib: Int?) -> String { kib.map { String(format: "%.0f MB", Double($0) * 1024 / 1_000_000) } ?? "?" }
