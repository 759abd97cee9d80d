/// A command line as read where it arrived (`CommandParser.read`): the typed command an event
/// carries from admission to its run, which executes it without reading the text again.
///
/// The team's custom commands are in the store, which only the run reads: a name that is no
/// built-in is kept as `.custom(name:)`, and the run checks it (`resolved`), answering "Unknown
/// command" with its suggestions when the team has no such command.
public enum ParsedCommand: Sendable, Hashable, Codable {
    /// A built-in command, or a team's custom command still to be checked.
    case command(Command)
    /// Not a command: what was wrong and how to fix it.
    case invalid(CommandError)
    /// A name that is no built-in, whose options did not scan: `error` is the answer if the team
    /// has a custom command by that name; otherwise the name is unknown.
    case invalidCustom(name: String, CommandError)

    /// The command once the team's custom commands are known: a custom name the team does not
    /// have is an unknown command, with "did you mean" among the built-ins and `customCommands`.
    public func resolved(customCommands: Set<String>) -> Result<Command, CommandError> {
        switch self {
        case .command(let command):
            if case .custom(let name) = command.kind, !customCommands.contains(name) {
                return .failure(CommandError(CommandParser.unknownCommandMessage(name, customCommands: customCommands)))
            }
            return .success(command)
        case .invalid(let error):
            return .failure(error)
        case .invalidCustom(let name, let error):
            guard customCommands.contains(name) else {
                return .failure(CommandError(CommandParser.unknownCommandMessage(name, customCommands: customCommands)))
            }
            return .failure(error)
        }
    }

    /// The command as read, its custom name (if any) not yet checked; nil when the line is none.
    /// For decisions about built-ins made before the run knows the team's commands.
    public var command: Command? {
        if case .command(let command) = self { command } else { nil }
    }
}
