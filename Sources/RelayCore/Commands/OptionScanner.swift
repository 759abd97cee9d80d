/// Pulls `--tier`, `--private` and `--k` out of a command's text, wherever they stand, and keeps
/// the rest of the text as typed (newlines included). A `--` before any text ends option scanning.
enum OptionScanner {
    static let help = "Options are `--tier cheap|mid|frontier`, `--private` and `--k N` (tribunal and chains)."

    static func extract(_ rest: Substring, allowK: Bool, command: String) throws(CommandError) -> (CommandOptions, String) {
        var options = CommandOptions()
        var kept = ""
        var index = rest.startIndex
        var scanning = true
        var pendingValueFor: String?

        while index < rest.endIndex {
            // Copy whitespace through as typed.
            if rest[index].isWhitespace {
                kept.append(rest[index])
                index = rest.index(after: index)
                continue
            }
            let end = rest[index...].firstIndex(where: \.isWhitespace) ?? rest.endIndex
            let token = String(rest[index..<end])
            defer { index = end }

            if let option = pendingValueFor {
                pendingValueFor = nil
                try apply(option, value: token, to: &options, allowK: allowK, command: command)
                kept = String(kept.trimmingTrailingHorizontalSpace())
                continue
            }
            // `--` before any text ends option scanning; inside prose ("well -- maybe") it is text.
            let startsText = kept.allSatisfy(\.isWhitespace)
            guard scanning, token.hasPrefix("--"), isOptionShaped(token), token != "--" || startsText else {
                kept += token
                continue
            }
            kept = String(kept.trimmingTrailingHorizontalSpace())
            if token == "--" {
                scanning = false
                continue
            }
            let body = token.dropFirst(2)
            let parts = body.split(separator: "=", maxSplits: 1).map(String.init)
            let name = parts[0].lowercased()
            switch name {
            case "private":
                options.isPrivate = true
            case "tier", "k":
                if parts.count == 2 {
                    try apply(name, value: parts[1], to: &options, allowK: allowK, command: command)
                } else {
                    pendingValueFor = name
                }
            default:
                throw CommandError("Unknown option `\(token)`. \(help)")
            }
        }
        if let option = pendingValueFor {
            throw CommandError(option == "tier" ? "`--tier` needs a value: cheap, mid or frontier." : "`--k` needs a number of models from 2 to 10.")
        }
        return (options, String(kept.trimmingWhitespace()))
    }

    /// `--word` or `--word=value`; text like `--` inside prose (`a -- b`) is left alone by the caller.
    private static func isOptionShaped(_ token: String) -> Bool {
        if token == "--" { return true }
        let body = token.dropFirst(2)
        guard let first = body.first, first.isASCII, first.isLetter else { return false }
        let name = body.prefix { $0 != "=" }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0 == "-") }
    }

    private static func apply(_ option: String, value: String, to options: inout CommandOptions, allowK: Bool, command: String) throws(CommandError) {
        switch option {
        case "tier":
            guard let tier = Tier(rawValue: value.lowercased()) else {
                throw CommandError("Unknown tier `\(value)`. Use `--tier cheap`, `--tier mid` or `--tier frontier`.")
            }
            options.tier = tier
        default:
            guard allowK else {
                throw CommandError("`--k` only applies to `/tribunal` and chains; `/\(command)` asks one model.")
            }
            guard let k = Int(value), (2...10).contains(k) else {
                throw CommandError("`--k` takes a number of models from 2 to 10, not `\(value)`.")
            }
            options.k = k
        }
    }
}
