import ArgumentParser
import Foundation
import Logging
import RelayCore
import RelayServer
import TerminalAdapter

/// `rhea-relay chat`: the terminal adapter, one user of one team at a prompt.
struct ChatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "chat", abstract: "Type commands at a prompt and see the replies.")

    @OptionGroup var common: CommonOptions

    func run() async throws {
        // Only errors reach the screen: a warning (a model that timed out, a retry) is said in the
        // reply it concerns, and a log line would land in the middle of the answer being written.
        let runtime = try await common.start(needsBackend: true, quietest: .error)
        writeOut("Backend: \(runtime.backendDescription)")
        do throws(TribunalError) {
            _ = try await runtime.tribunal.health()
        } catch {
            writeOut("Warning: \(error.operatorMessage)")  // the operator's terminal: name the address
        }
        let chat = TerminalChat(
            relay: runtime.makeRelay(), team: common.team, user: common.user, style: TerminalStyle.detect(descriptor: STDOUT_FILENO))
        let interactive = isatty(STDIN_FILENO) == 1
        let prompt: @Sendable () -> Void = { if interactive { FileHandle.standardOutput.write(Data("› ".utf8)) } }
        // Ctrl-C stops the command running, not the session; at the prompt it says so.
        let interrupts = ChatInterrupts()
        signal(SIGINT, SIG_IGN)
        let sigint = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        sigint.setEventHandler {
            guard !interrupts.interrupt() else { return }
            writeOut("\n" + TerminalChat.interruptHint)
            prompt()
        }
        sigint.resume()
        let working = isatty(STDERR_FILENO) == 1 ? WorkingIndicator(write: { FileHandle.standardError.write(Data($0.utf8)) }) : nil
        let ending = try await chat.run(
            lines: StandardInputLines(), prompt: prompt, write: writeOut, stream: writeRaw, interrupts: interrupts, working: working)
        sigint.cancel()
        // Ctrl-D leaves the cursor after the prompt: end its line.
        if ending == .endOfInput && interactive { writeOut("") }
        await runtime.shutdown()
    }
}

/// Lines of standard input as an async sequence (blocking reads happen off the cooperative pool).
struct StandardInputLines: AsyncSequence {
    typealias Element = String

    func makeAsyncIterator() -> AsyncStream<String>.Iterator {
        AsyncStream<String> { continuation in
            let thread = Thread {
                while let line = readLine(strippingNewline: true) { continuation.yield(line) }
                continuation.finish()
            }
            thread.start()
        }.makeAsyncIterator()
    }
}
