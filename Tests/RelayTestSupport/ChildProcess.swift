import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A command the tests started failed: which step, why, and the end of what it printed.
struct ChildProcessError: Error, CustomStringConvertible, Sendable {
    let step: String
    let reason: String
    var output: String = ""

    var description: String { output.isEmpty ? "\(step) failed: \(reason)" : "\(step) failed: \(reason)\n\(output)" }
}

/// Runs `command` in `directory` and returns its exit status and output (stdout and stderr).
///
/// Not Foundation's `Process`: on Linux it learns that a child exited when a socket it passes to
/// the child closes, and the server that `pg_ctl start` leaves running inherits that socket, so
/// the wait never ends. Here the child gets only stdin, stdout and stderr, its output goes to a
/// file rather than a pipe (nothing waits for an end of file), and the exit is polled.
public func runProcess(_ command: [String], in directory: String, timeout: Duration, step: String) async throws -> (status: Int32, output: String) {
    let outputPath = directory + "/.command-\(UUID().uuidString).out"
    defer { try? FileManager.default.removeItem(atPath: outputPath) }
    // In a process group of its own, so that a timeout ends what it started too: a script that
    // timed out left pip compiling llama.cpp for minutes beside the rest of the tests.
    let pid = try spawn(command, in: directory, output: outputPath, ownGroup: true, step: step)
    let deadline = ContinuousClock.now.advanced(by: timeout)
    var status: Int32 = 0
    while waitpid(pid, &status, WNOHANG) == 0 {
        if ContinuousClock.now >= deadline {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
            let output = (FileManager.default.contents(atPath: outputPath)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            throw ChildProcessError(step: step, reason: "timed out after \(timeout)", output: tail(output, lines: 20))
        }
        // Not cancellable: leaving the child behind would leave the cluster in an unknown state.
        // Once the task is cancelled, `Task.sleep` returns at once, so sleep the thread instead.
        if (try? await Task.sleep(for: .milliseconds(10))) == nil { usleep(10_000) }
    }
    let output = FileManager.default.contents(atPath: outputPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
    // The wait status's layout: the low 7 bits are the killing signal, else the exit code is above them.
    let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return (exitStatus, output)
}

/// Starts `command` in `directory` with stdin from `input` (nil: /dev/null), stdout to `output`
/// (nil: /dev/null) and stderr to `errors` (nil: with stdout), every other descriptor closed and
/// default signal handling; `environment` (nil: this process's) is the child's whole environment.
func spawn(
    _ command: [String], in directory: String, input: String? = nil, output: String?, errors: String? = nil,
    environment: [String: String]? = nil, ownGroup: Bool = false, step: String
) throws -> pid_t {
    #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t = nil
        var attributes: posix_spawnattr_t = nil
    #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
    #endif
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, input ?? "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    if let errors {
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    } else {
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
    }
    // Every other descriptor is closed in the child, at its exec: one the tests' other work opens
    // meanwhile (a socket, a pipe) must not end up held by a server that outlives it. Closing
    // what a listing showed before the spawn left a window in which such a descriptor leaked.
    if let closeFrom = spawnCloseFrom {
        _ = closeFrom(&actions, 3)
    } else {
        for descriptor in openDescriptors() where descriptor > 2 { posix_spawn_file_actions_addclose(&actions, descriptor) }
    }

    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // The calling thread may block signals, and the test runner ignores SIGINT, SIGQUIT and
    // SIGPIPE; the servers started here (pg_ctl's, Synapse) expect the defaults.
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    // `ownGroup`: the child leads a new process group (its id), which `kill(-pid, …)` reaches whole.
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (ownGroup ? POSIX_SPAWN_SETPGROUP : 0)))

    // The working directory is set by a shell: the user a command runs as must be able to
    // enter it (pg_ctl, run as postgres, resolves its own path from there).
    let shell = ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, directory] + command
    let arguments: [UnsafeMutablePointer<CChar>?] = shell.map { strdup($0) } + [nil]
    let variables = environment ?? ProcessInfo.processInfo.environment
    let environment: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (arguments + environment).forEach { free($0) } }
    var pid = pid_t()
    let result = posix_spawn(&pid, shell[0], &actions, &attributes, arguments, environment)
    guard result == 0 else {
        throw ChildProcessError(step: step, reason: "could not run \(command[0]): \(String(cString: strerror(result)))")
    }
    return pid
}

#if canImport(Darwin)
    private let spawnCloseFrom: ((UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = nil
#else
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not export (it is declared for `_GNU_SOURCE` only): looked up by name.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private let spawnCloseFrom: CloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: CloseFrom.self)
    }
#endif

/// The descriptors open in this process now.
func openDescriptors() -> [Int32] {
    let listing = FileManager.default.fileExists(atPath: "/proc/self/fd") ? "/proc/self/fd" : "/dev/fd"
    return ((try? FileManager.default.contentsOfDirectory(atPath: listing)) ?? []).compactMap { Int32($0) }
}

/// The last `lines` lines of `text`, without its final line break.
func tail(_ text: String, lines: Int) -> String {
    var all = text.split(separator: "\n", omittingEmptySubsequences: false)
    while all.last?.isEmpty == true { all.removeLast() }
    return all.suffix(lines).joined(separator: "\n")
}
