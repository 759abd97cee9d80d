import ArgumentParser
import Foundation
import RelayCore
import RelayServer
import TerminalAdapter

/// `rhea-relay run '<command line>'`: one command, the reply on stdout, non-zero exit on failure.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Run one command line and print the reply (exit code 1 when it fails).")

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: "Text of the message the command replies to (input when none is typed).")
    var replyTo: String?

    @Flag(name: .long, help: "Print only the whole reply at the end, not the answer as the model writes it.")
    var noStream = false

    @Argument(help: "The command line, e.g. '/translate fr Good morning'.")
    var commandLine: String

    func run() async throws {
        let runtime = try await common.start(needsBackend: true)
        let chat = TerminalChat(relay: runtime.makeRelay(), team: common.team, user: common.user)
        // Progress goes to stderr so stdout holds only the reply, streamed or whole.
        let (reply, rest) = await chat.answer(commandLine, repliedTo: replyTo, write: writeErr, stream: noStream ? nil : writeRaw)
        writeOut(rest)
        await runtime.shutdown()
        if reply.kind == .error { throw ExitCode(1) }
    }
}
