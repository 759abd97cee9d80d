/// Finds a command's input: typed text › the replied-to message › the thread (where allowed).
public enum InputResolver {
    public static func resolve(typed: String, event: Event, sources: InputSources) -> String? {
        if !typed.isEmpty { return typed }
        if sources.reply, let replied = event.repliedTo, !replied.isEmpty { return replied }
        if sources.thread, let thread = event.threadText, !thread.isEmpty { return thread }
        return nil
    }

    /// The reply when there is no input: exactly what to add, and where.
    public static func missingInputMessage(command: String, noun: String, example: String, sources: InputSources) -> String {
        var ways = ["add it after the command (`\(example)`)"]
        if sources.reply { ways.append("reply to a message with `/\(command)`") }
        if sources.thread { ways.append("use `/\(command)` inside a thread") }
        let list = ways.count > 1 ? ways.dropLast().joined(separator: ", ") + " or " + ways.last! : ways[0]
        return "`/\(command)` needs \(noun): \(list)."
    }
}
