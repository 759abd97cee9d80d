import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process the tests start and wait for (`rhea-relay run`, `rhea-relay serve`): its
/// output goes to files, its exit is polled with `waitpid`, and every wait is bounded.
///
/// Not Foundation's `Process`: on Linux it learns of an exit when a socket it gave the child
/// closes, so a process started meanwhile that inherits that socket (a Synapse, a speech server,
/// another `serve`) keeps `isRunning` true until it exits too — and a loop waiting for the exit
/// never ends; reading a pipe to its end has the same weakness. Here the child has only its
/// stdin, stdout and stderr (`spawn` closes the rest at exec), and nothing waits on a pipe.
public final class SpawnedProcess: Sendable {
    public let processIdentifier: Int32
    /// The wait status, once the exit has been seen.
    private let status = Mutex<Int32?>(nil)

    /// Starts `command` in `directory` with exactly `environment`, stdin from the file `input`
    /// (nil: /dev/null), stdout and stderr to the files named (nil: /dev/null).
    public init(
        _ command: [String], in directory: String, environment: [String: String], input: String? = nil, output: String?, errors: String?
    ) throws {
        processIdentifier = try spawn(
            command, in: directory, input: input, output: output ?? "/dev/null", errors: errors ?? "/dev/null", environment: environment,
            step: "start \(command.first ?? "")")
    }

    /// Whether it has not exited yet (reaps it once it has).
    public var isRunning: Bool {
        status.withLock { status in
            guard status == nil else { return false }
            var raw: Int32 = 0
            let result = waitpid(processIdentifier, &raw, WNOHANG)
            if result == processIdentifier {
                status = raw
            } else if result < 0 {
                // Not our child any more (reaped elsewhere): gone, status unknown.
                status = 0x7f00
            }
            return status == nil
        }
    }

    /// Its exit code, or 128 + the signal that ended it; -1 while it runs.
    public var terminationStatus: Int32 {
        guard !isRunning, let raw = status.withLock({ $0 }) else { return -1 }
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
    }

    /// SIGTERM.
    public func terminate() { if isRunning { kill(processIdentifier, SIGTERM) } }

    /// Returns once it has exited: SIGKILL when it is still running after `limit`, then at most
    /// 10 s more (a killed process ends at once unless the kernel holds it). Polls with
    /// `Task.sleep`, so no thread of the cooperative pool is held meanwhile; returns whether the
    /// exit was seen.
    @discardableResult
    public func exited(within limit: Duration = .seconds(30)) async -> Bool {
        if await waitForExit(within: limit) { return true }
        kill(processIdentifier, SIGKILL)
        return await waitForExit(within: .seconds(10))
    }

    /// Whether it exits within `limit` (it is left running when not).
    public func waitForExit(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while isRunning {
            if ContinuousClock.now >= deadline { return false }
            // Once the task is cancelled `Task.sleep` returns at once; the deadline still ends the loop.
            if (try? await Task.sleep(for: .milliseconds(20))) == nil { usleep(20_000) }
        }
        return true
    }
}
