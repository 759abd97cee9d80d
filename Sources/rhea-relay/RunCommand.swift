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

    @Argument(help: "The command line, e.g. '/translate fr Good morning'.")
    var commandLine: String

    func run() async throws {
        let runtime = try await common.start(needsBackend: true)
        let chat = TerminalChat(relay: runtime.makeRelay(), team: common.team, user: common.user)
        // Progress goes to stderr so stdout holds only the reply.
        let reply = await chat.runLine(commandLine, repliedTo: replyTo, write: writeErr)
        writeOut(PlainTextRenderer.render(reply))
        await runtime.shutdown()
        if reply.kind == .error { throw ExitCode(1) }
    }
}
