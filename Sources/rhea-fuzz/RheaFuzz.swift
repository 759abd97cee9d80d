import ArgumentParser
import RelayFuzz

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `swift run -c release rhea-fuzz [--iterations 1000000] [--target NAME]…`: drives every
/// inbound payload decoder and backend answer decoder with mutated real payloads, in this
/// process. A trap ends the process; the input that caused it is written to
/// `fuzz-crash-<target>.bin` first, and `--replay` prints any input again.
///
/// An async command: the decoders run inside a task, where the task-local that counts clamped
/// numbers lives (outside one, the release build trapped in `swift_task_localValuePush`).
@main
struct RheaFuzz: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rhea-fuzz", abstract: "Fuzz the relay's decoders of untrusted input (0 crashes expected).")

    @Option(help: "Inputs per target (the seeds first, then mutations).")
    var iterations = 1_000_000

    @Option(name: .customLong("target"), help: "A target to run (repeat for more); all when absent. See --list.")
    var targets: [String] = []

    @Option(help: "The random seed: the same seed gives the same inputs.")
    var seed: UInt64 = 1

    @Flag(help: "List the targets and exit.")
    var list = false

    @Option(help: "Print input N of the (one) --target to stdout, and exit.")
    var replay: Int?

    func run() async throws {
        if list {
            for target in FuzzTargets.all { print("\(target.name)\t\(target.summary) (\(target.seeds.count) seeds)") }
            return
        }
        let chosen: [FuzzTarget]
        switch FuzzTargets.select(targets) {
        case .success(let found): chosen = found
        case .failure(let unknown): throw ValidationError(unknown.description)
        }
        if let replay {
            guard chosen.count == 1, let target = chosen.first else { throw ValidationError("--replay needs exactly one --target") }
            let input = Fuzzer.input(replay, of: target, seed: seed)
            input.withUnsafeBufferPointer { _ = write(1, $0.baseAddress, $0.count) }
            return
        }
        guard iterations > 0 else { throw ValidationError("--iterations must be positive") }
        CrashCapture.install()
        print("rhea-fuzz: seed \(seed), \(iterations) inputs per target")
        var total = 0
        for target in chosen {
            CrashCapture.prepare(target: target.name)
            let report = Fuzzer.run(target, iterations: iterations, seed: seed) { index, input in
                CrashCapture.keep(index: index, input: input)
            }
            total += report.inputs
            let tenths = report.elapsed.components.seconds * 10 + report.elapsed.components.attoseconds / 100_000_000_000_000_000
            let seconds = "\(tenths / 10).\(tenths % 10)"
            print(
                "\(report.target): \(report.inputs) inputs, \(report.accepted) accepted, \(report.inputs - report.accepted) refused, \(report.clamped) numbers clamped, \(seconds) s, 0 crashes"
            )
        }
        print("rhea-fuzz: \(total) inputs over \(chosen.count) targets, 0 crashes")
    }
}

/// Writes the input being decoded to `fuzz-crash-<target>.bin` when the process traps, from a
/// signal handler (so only async-signal-safe calls, on its own stack: a stack overflow from
/// deep nesting must still be reported).
enum CrashCapture {
    static let capacity = 1 << 20
    nonisolated(unsafe) static var buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    nonisolated(unsafe) static var length = 0
    nonisolated(unsafe) static var index = 0
    nonisolated(unsafe) static var path: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) static var alternateStack = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 16)

    static func install() {
        var stack = stack_t()
        stack.ss_sp = alternateStack
        stack.ss_size = 1 << 16
        stack.ss_flags = 0
        sigaltstack(&stack, nil)
        for signal in [SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGABRT, SIGFPE] {
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_handler = crashed
            #else
                action.__sigaction_u.__sa_handler = crashed
            #endif
            action.sa_flags = Int32(SA_ONSTACK) | Int32(bitPattern: UInt32(SA_RESETHAND))
            sigaction(signal, &action, nil)
        }
    }

    static func prepare(target: String) {
        free(path)
        path = strdup("fuzz-crash-\(target).bin")
    }

    static func keep(index: Int, input: [UInt8]) {
        let count = min(input.count, capacity)
        input.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { buffer.update(from: base, count: count) }
        }
        length = count
        Self.index = index
    }
}

/// The handler: write the input and its index, then let the signal kill the process (the
/// handler was reset to the default by `SA_RESETHAND`).
private func crashed(_ signal: Int32) {
    if let path = CrashCapture.path {
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if file >= 0 {
            _ = write(file, CrashCapture.buffer, CrashCapture.length)
            close(file)
        }
        let message = "\nrhea-fuzz: CRASH on input index "
        _ = message.withCString { write(2, $0, strlen($0)) }
        var digits = [UInt8](repeating: 0, count: 24)
        var value = CrashCapture.index
        var position = digits.count
        repeat {
            position -= 1
            digits[position] = UInt8(48 + value % 10)
            value /= 10
        } while value > 0 && position > 0
        digits.withUnsafeBufferPointer { _ = write(2, $0.baseAddress! + position, digits.count - position) }
        _ = " (input written to fuzz-crash-<target>.bin)\n".withCString { write(2, $0, strlen($0)) }
    }
    raise(signal)
}
