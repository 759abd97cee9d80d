import Foundation
public import RelayCore
public import RelayPipeline
import Synchronization

/// The terminal adapter: a prompt where one user of one team types command lines.
///
/// Lines are read from any `AsyncSequence` of strings (stdin in the CLI, an array in tests), so
/// the loop is testable without a terminal.
public struct TerminalChat: Sendable {
    public var relay: Relay
    public var team: String
    public var user: String
    public var channel: String
    /// How replies are dressed: colour on a terminal that shows it (`TerminalStyle.detect`).
    public var style: TerminalStyle

    /// Only the operator uses the terminal, so its replies name what failed in full (the
    /// backend's address, the provider's text) instead of an error id.
    public init(relay: Relay, team: String = "local", user: String = "me", channel: String = "terminal", style: TerminalStyle = .plain) {
        self.relay = relay.reportingFailures(.operator)
        self.team = team
        self.user = user
        self.channel = channel
        self.style = style
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
        let printer = stream.map { StreamPrinter(raw: $0, style: style) }
        let reply =
            await relay.handle(event) { [style] progress in
                if let partial = progress.partial {
                    printer?.show(partial)
                } else {
                    write(PlainTextRenderer.render(progress, style: style))
                }
            } ?? .info("(already handled)")
        return (reply, printer?.rest(of: reply) ?? PlainTextRenderer.render(reply, style: style))
    }

    /// How a session ended: `/quit`, or the end of the input (Ctrl-D).
    public enum Ending: Sendable {
        case quit
        case endOfInput
    }

    /// What Ctrl-C at the prompt says: it stops commands, and how to leave.
    public static let interruptHint = "(Ctrl-C stops a command while it runs; `/quit` or Ctrl-D leaves.)"

    /// What plain text typed at the prompt gets: the command that asks it, and where the list is.
    static func plainTextHint(_ line: String) -> String {
        let shown = line.count > 60 ? String(line.prefix(59)) + "…" : line
        return "Commands start with `/`. To ask the models, type `/ask \(shown)`; `/help` lists every command."
    }

    /// Reads lines until the input ends or the user types `/quit`. Answers are printed as they
    /// are written to `stream` (raw text) when given. With `interrupts`, Ctrl-C stops the command
    /// running ("Cancelled.") and the session goes on; with `working`, a spinner shows until the
    /// command's first output.
    @discardableResult
    public func run<Lines: AsyncSequence>(
        lines: Lines, prompt: @escaping @Sendable () -> Void, write: @escaping @Sendable (String) -> Void, stream: (@Sendable (String) -> Void)? = nil,
        interrupts: ChatInterrupts? = nil, working: WorkingIndicator? = nil
    ) async throws -> Ending
    where Lines.Element == String {
        // Whatever a command writes first erases the spinner.
        let write: @Sendable (String) -> Void = { text in
            working?.stop()
            write(text)
        }
        let stream = stream.map { stream in
            { @Sendable (text: String) in
                working?.stop()
                stream(text)
            }
        }
        write("Rhea Relay — type a command (`/help` lists them, `/quit` leaves).")
        prompt()
        for try await raw in lines {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty {
                prompt()
                continue
            }
            if ["/quit", "/exit", "quit", "exit"].contains(line) { return .quit }
            // Plain text is most likely a question: say how to ask it rather than "unknown command".
            if !line.hasPrefix("/") {
                write(Self.plainTextHint(line))
                prompt()
                continue
            }
            working?.start()
            let rest = Mutex<String?>(nil)
            let finished = await (interrupts ?? ChatInterrupts()).run {
                let answer = await self.answer(line, write: write, stream: stream).rest
                rest.withLock { $0 = answer }
            }
            working?.stop()
            // A stopped command's reply (an error from its cancelled call, or half an answer) is
            // not shown: it was stopped on purpose.
            write(finished ? rest.withLock { $0 } ?? "" : "\nCancelled.")
            prompt()
        }
        return .endOfInput
    }
}
