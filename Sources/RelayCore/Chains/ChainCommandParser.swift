/// Parses `/chain …` and `/run …`. The DSL itself is checked later, against the team's custom
/// commands, by `ChainParser`.
package enum ChainCommandParser {
    static let usage =
        "Usage: `/chain save NAME = DSL`, `/chain run NAME [TEXT]`, `/chain list`, `/chain show NAME`, `/chain delete NAME`, `/chain export [NAME]`, `/chain import NAME = DSL`."

    static func parse(_ rest: Substring, command: String) throws(CommandError) -> Command {
        let (sub, afterSub) = String(rest.trimmingWhitespace()).splitFirstWord()
        switch sub.lowercased() {
        case "save":
            let (name, source) = try splitDefinition(afterSub, example: "/chain save polish = input > grammar > output")
            return Command(kind: .chain(.save(name: name, source: source)))
        case "run":
            return try parseRun(Substring(afterSub), command: "chain run")
        case "list", "":
            return Command(kind: .chain(.list))
        case "show", "delete", "remove", "rm", "export":
            let (name, extra) = afterSub.splitFirstWord()
            if !extra.isEmpty { throw CommandError("`/chain \(sub)` takes one chain name; found `\(extra)` after it.") }
            switch sub.lowercased() {
            case "show", "delete", "remove", "rm":
                guard !name.isEmpty else { throw CommandError("Which chain? `/chain \(sub.lowercased()) NAME`; `/chain list` shows them.") }
                return Command(kind: .chain(sub.lowercased() == "show" ? .show(name: name.lowercased()) : .delete(name: name.lowercased())))
            default:
                return Command(kind: .chain(.export(name: name.isEmpty ? nil : name.lowercased())))
            }
        case "import":
            guard !afterSub.isEmpty else {
                throw CommandError("Paste what `/chain export` printed after `/chain import`, one `NAME = DSL` per line.")
            }
            return Command(kind: .chain(.importDefinitions(try importDefinitions(afterSub))))
        default:
            throw CommandError("Unknown `/chain \(sub)`. \(usage)")
        }
    }

    /// `/run NAME [--private] [--tier T] [--k N] [TEXT]`.
    static func parseRun(_ rest: Substring, command: String) throws(CommandError) -> Command {
        let (options, text) = try OptionScanner.extract(rest, allowK: true, command: command)
        let (name, input) = text.splitFirstWord()
        guard !name.isEmpty else {
            throw CommandError("Which chain? `/\(command) NAME [TEXT]`; `/chain list` shows the saved ones.")
        }
        return Command(kind: .chain(.run(name: name.lowercased())), text: input, options: options)
    }

    /// The `NAME = DSL` lines of an import (what `/chain export` printed: blank lines, `#`
    /// comments and its "Import with" note are skipped). One bad line refuses the whole import,
    /// naming the line, so a bad paste changes nothing.
    static func importDefinitions(_ text: String) throws(CommandError) -> [ChainDefinition] {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") && !$0.hasPrefix("Import with") }
        var definitions: [ChainDefinition] = []
        for (index, line) in lines.enumerated() {
            do throws(CommandError) {
                let (name, source) = try splitDefinition(String(line), example: "polish = input > grammar > output")
                definitions.append(ChainDefinition(name: name, source: source, line: index + 1))
            } catch {
                throw CommandError("Nothing imported: line \(index + 1): \(error.message)")
            }
        }
        return definitions
    }

    /// `NAME = DSL` (also each line of an import).
    static func splitDefinition(_ text: String, example: String) throws(CommandError) -> (String, String) {
        guard let equals = text.firstIndex(of: "=") else {
            throw CommandError("Write the chain as `NAME = DSL`, for example `\(example)`.")
        }
        let name = String(text[..<equals].trimmingWhitespace())
        let source = String(text[text.index(after: equals)...].trimmingWhitespace())
        guard !name.isEmpty, !name.contains(where: \.isWhitespace) else {
            throw CommandError("Give the chain a one-word name before `=`, for example `\(example)`.")
        }
        guard !source.isEmpty else { throw CommandError("The chain `\(name)` has no blocks after `=`, for example `\(example)`.") }
        return (try Names.validate(name, what: "chain"), source)
    }
}
