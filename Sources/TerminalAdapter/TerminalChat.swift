import Foundation
public import RelayCore
public import RelayPipeline

/// The terminal adapter: a prompt where one user of one team types command lines.
///
/// Lines are read from any `AsyncSequence` of strings (stdin in the CLI, an array in tests), so
/// the loop is testable without a terminal.
public struct TerminalChat: Sendable {
    public var relay: Relay
    public var team: String
    public var user: String
    public var channel: String

    /// Only the operator uses the terminal, so its replies name what failed in full (the
    /// backend's address, the provider's text) instead of an error id.
    public init(relay: Relay, team: String = "local", user: String = "me", channel: String = "terminal") {
        self.relay = relay.reportingFailures(.operator)
        self.team = team
        self.user = user
        self.channel = channel
    }

    /// Runs one command line and returns its reply (progress lines go to `write` as they happen).
    public func runLine(_ line: String, repliedTo: String? = nil, write: @escaping @Sendable (String) -> Void) async -> Reply {
        await answer(line, repliedTo: repliedTo, write: write, stream: nil).reply
    }

    /// Runs one command line. With `stream`, an answer is printed to it as the model writes it
    /// (raw text, no newline added) and `rest` is what is left to print; without, `rest` is the
    /// whole reply. Progress lines go to `write` as they happen.
    public func answer(_ line: String, repliedTo: String? = nil, write: @escaping @Sendable (String) -> Void, stream: (@Sendable (String) -> Void)?) async
        -> (reply: Reply, rest: String)
    {
        // The terminal user owns their local team: they may change any chain or command in it.
        let event = Event(platform: "terminal", team: team, channel: channel, user: user, text: line, repliedTo: repliedTo, isAdmin: true)
        let printer = stream.map { StreamPrinter(raw: $0) }
        let reply =
            await relay.handle(event) { progress in
                if let partial = progress.partial {
                    printer?.show(partial)
                } else {
                    write(PlainTextRenderer.render(progress))
                }
            } ?? .info("(already handled)")
        return (reply, printer?.rest(of: reply) ?? PlainTextRenderer.render(reply))
    }

    /// What plain text typed at the prompt gets: the command that asks it, and where the list is.
    static func plainTextHint(_ line: String) -> String {
        let shown = line.count > 60 ? String(line.prefix(59)) + "…" : line
        return "Commands start with `/`. To ask the models, type `/ask \(shown)`; `/help` lists every command."
    }

    /// Reads lines until the input ends or the user types `/quit`. Answers are printed as they
    /// are written to `stream` (raw text) when given.
    public func run<Lines: AsyncSequence>(
        lines: Lines, prompt: @escaping @Sendable () -> Void, write: @escaping @Sendable (String) -> Void, stream: (@Sendable (String) -> Void)? = nil
    ) async throws
    where Lines.Element == String {
        write("Rhea Relay — type a command (`/help` lists them, `/quit` leaves).")
        prompt()
        for try await raw in lines {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty {
                prompt()
                continue
            }
            if ["/quit", "/exit", "quit", "exit"].contains(line) { break }
            // Plain text is most likely a question: say how to ask it rather than "unknown command".
            if !line.hasPrefix("/") {
                write(Self.plainTextHint(line))
                prompt()
                continue
            }
            write(await answer(line, write: write, stream: stream).rest)
            prompt()
        }
    }
}
