import Foundation
import NIOCore

/// NIO sizes its event loop group by the machine's cores (or a cgroup's quota), not by the CPUs
/// this process may run on: under `taskset -c 0` it would start two loops on one core, which then
/// take turns by context switches (measured: about 12 % more CPU per command than one loop).
enum EventLoopSizing {
    /// Sets `NIO_SINGLETON_GROUP_LOOP_COUNT` to the CPUs in this process's affinity mask when that
    /// is fewer than NIO would use, unless it is set already. Call before NIO's singletons are used.
    static func fitToAffinity() {
        guard getenv("NIO_SINGLETON_GROUP_LOOP_COUNT") == nil, let allowed = affinityCount(), allowed < System.coreCount else { return }
        setenv("NIO_SINGLETON_GROUP_LOOP_COUNT", String(allowed), 1)
    }

    /// How many CPUs the affinity mask allows (`Cpus_allowed_list` in /proc/self/status, e.g.
    /// `0`, `0-3,8`), or nil when it cannot tell.
    static func affinityCount() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") })
        else { return nil }
        var count = 0
        for range in line.dropFirst("Cpus_allowed_list:".count).split(separator: ",") {
            let bounds = range.split(separator: "-").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            switch bounds.count {
            case 1:
                guard bounds[0] != nil else { return nil }
                count += 1
            case 2:
                guard let low = bounds[0], let high = bounds[1], high >= low else { return nil }
                count += high - low + 1
            default: return nil
            }
        }
        return count > 0 ? count : nil
    }
}
