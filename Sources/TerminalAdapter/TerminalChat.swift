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
        // The terminal user owns their local team: they may change any chain or command in it.
        let event = Event(platform: "terminal", team: team, channel: channel, user: user, text: line, repliedTo: repliedTo, isAdmin: true)
        let reply = await relay.handle(event) { progress in
            write(PlainTextRenderer.render(progress))
        }
        return reply ?? .info("(already handled)")
    }

    /// What plain text typed at the prompt gets: the command that asks it, and where the list is.
    static func plainTextHint(_ line: String) -> String {
        let shown = line.count > 60 ? String(line.prefix(59)) + "…" : line
        return "Commands start with `/`. To ask the models, type `/ask \(shown)`; `/help` lists every command."
    }

    /// Reads lines until the input ends or the user types `/quit`.
    public func run<Lines: AsyncSequence>(lines: Lines, prompt: @escaping @Sendable () -> Void, write: @escaping @Sendable (String) -> Void) async throws
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
            let reply = await runLine(line, write: write)
            write(PlainTextRenderer.render(reply))
            prompt()
        }
    }
}
