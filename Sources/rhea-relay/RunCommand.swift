import ArgumentParser
import Foundation
import RelayCore
import RelayServer
import TerminalAdapter

/// `rhea-relay run '<command line>'`: one command, the reply on stdout, non-zero exit on failure.
///
/// For scripts: stdout holds only the reply (`--plain`: only its text; `--json`: one JSON
/// object); progress and errors go to stderr. Exit codes: 0 ok, 1 the command failed, 2 bad
/// configuration, 64 a usage error (ArgumentParser's, e.g. an unknown option).
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Run one command line and print the reply.",
        discussion: """
            stdout holds only the reply; progress and errors go to stderr. \
            Exit codes: 0 ok, 1 the command failed, 2 bad configuration, 64 a usage error.
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: "Text of the message the command replies to (input when none is typed).")
    var replyTo: String?

    @Flag(name: .long, help: "Print only the whole reply at the end, not the answer as the model writes it.")
    var noStream = false

    @Flag(name: .long, help: "Print the reply as one JSON object (text, verdict, probability, agreement, models, elapsed, error); implies --no-stream.")
    var json = false

    @Flag(name: .long, help: "Print only the reply's text, without its heading and notes; implies --no-stream.")
    var plain = false

    @Argument(help: "The command line, e.g. '/translate fr Good morning'.")
    var commandLine: String

    func validate() throws {
        if json && plain { throw ValidationError("--json and --plain are two ways to print the reply: give one.") }
    }

    func run() async throws {
        let runtime = try await common.start(needsBackend: true)
        let chat = TerminalChat(relay: runtime.makeRelay(), team: common.team, user: common.user)
        let streams = !(noStream || json || plain)
        let started = ContinuousClock.now
        // Progress goes to stderr so stdout holds only the reply, streamed or whole.
        let (reply, rest) = await chat.answer(commandLine, repliedTo: replyTo, write: writeErr, stream: streams ? writeRaw : nil)
        let failed = reply.kind == .error
        if json {
            writeOut(ReplyJSON(reply, elapsed: started.duration(to: .now)).line)
        } else if failed {
            // An error is not the reply a script reads: stderr, and stdout stays empty.
            writeErr(PlainTextRenderer.render(reply))
        } else if plain {
            writeOut(reply.body)
        } else {
            writeOut(rest)
        }
        await runtime.shutdown()
        if failed { throw ExitCode(1) }
    }
}
