import Foundation

/// Turns a command line into a `Command`, or a `CommandError` that says what to fix.
///
/// Accepts `/cmd`, `cmd`, `/cmd@botname` (Telegram groups) and the catch-all `/rhea <command line>`.
public struct CommandParser: Sendable {
    /// The team's custom command names, so `/eli5 …` parses and "did you mean" can suggest them.
    public var customCommands: Set<String>

    public init(customCommands: Set<String> = []) {
        self.customCommands = customCommands
    }

    /// Reads `line` and checks a custom command's name against `customCommands`: `read`, then
    /// `ParsedCommand.resolved`, for callers that know the team's commands at hand.
    public func parse(_ line: String) throws(CommandError) -> Command {
        try Self.read(line).resolved(customCommands: customCommands).get()
    }

    /// Reads a command line where it arrives, once: without the team's custom commands, which
    /// only the run reads from the store, so a name that is no built-in is kept as a custom
    /// command the run checks (`ParsedCommand.resolved`).
    public static func read(_ line: String) -> ParsedCommand {
        var body = Substring(line).trimmingWhitespace()
        if body.hasPrefix("/") { body = body.dropFirst() }
        guard let wordEnd = body.firstIndex(where: \.isWhitespace) ?? (body.isEmpty ? nil : body.endIndex) else {
            return .invalid(CommandError("Type a command, for example `/translate fr Good morning`. `/help` lists them all."))
        }
        var word = body[..<wordEnd].lowercased()
        if let at = word.firstIndex(of: "@") { word = String(word[..<at]) }  // `/translate@rhea_bot`
        let rest = body[wordEnd...]

        if word == "rhea" {
            let inner = rest.trimmingWhitespace()
            return inner.isEmpty ? .command(Command(kind: .help(topic: nil))) : read(String(inner))
        }
        if let builtin = BuiltinCommand(named: word) {
            do throws(CommandError) {
                return .command(try parseBuiltin(builtin, rest: rest))
            } catch {
                return .invalid(error)
            }
        }
        do throws(CommandError) {
            let (options, text) = try OptionScanner.extract(rest, allowK: false, command: word)
            return .command(Command(kind: .custom(name: word), text: text, options: options))
        } catch {
            return .invalidCustom(name: word, error)
        }
    }

    private static func parseBuiltin(_ builtin: BuiltinCommand, rest: Substring) throws(CommandError) -> Command {
        /// The options, wherever they stand after the command, and the text without them.
        func scanned() throws(CommandError) -> (CommandOptions, String) {
            try OptionScanner.extract(rest, allowK: builtin == .tribunal, command: builtin.name)
        }
        func quick(_ action: QuickAction) throws(CommandError) -> Command {
            let (options, text) = try scanned()
            return Command(kind: .action(action), text: text, options: options)
        }
        switch builtin {
        // These scan their own options: a chain's DSL and a template are text, not options.
        case .chain:
            return try ChainCommandParser.parse(rest, command: "chain")
        case .run:
            return try ChainCommandParser.parseRun(rest, command: "run")
        case .command:
            return try Self.parseCustomAdmin(rest)
        case .translate:
            let (options, text) = try scanned()
            let (language, remaining) = LanguagePrefix.split(text)
            return Command(kind: .translate(language), text: remaining, options: options)
        case .fix:
            return try quick(.grammar)
        case .rewrite(nil):
            let (options, text) = try scanned()
            let (style, remaining) = Self.splitStyle(text)
            return Command(kind: .action(.rewrite(style: style)), text: remaining, options: options)
        case .rewrite(let style?):
            return try quick(.rewrite(style: style))
        case .summarize:
            return try quick(.summarize)
        case .explain:
            return try quick(.explain)
        case .extract:
            return try quick(.extract)
        case .ai:
            return try quick(.freeform)
        case .tribunal:
            let (options, text) = try scanned()
            return Command(kind: .tribunal, text: text, options: options)
        case .transcribe:
            let (options, text) = try scanned()
            guard text.trimmingWhitespace().isEmpty else {
                throw CommandError(
                    "`/transcribe` takes no text: send it as the caption of a voice note, or as a reply to one. To work on text, use another command, e.g. `/translate fr \(text)`."
                )
            }
            return Command(kind: .transcribe, options: options)
        case .settings:
            let (options, text) = try scanned()
            return Command(kind: .settings(try Self.parseSettings(text)), options: options)
        case .history:
            let (options, text) = try scanned()
            let words = text.trimmingWhitespace().lowercased().split(whereSeparator: \.isWhitespace)
            switch (words.first, words.count) {
            case (nil, _): return Command(kind: .history(.show), options: options)
            case ("clear", 1): return Command(kind: .history(.clear), options: options)
            case ("last", 1): return Command(kind: .history(.last(page: 1)), options: options)
            case ("last", 2):
                guard let page = Int(words[1]), page >= 1 else {
                    throw CommandError("`/history last PAGE` takes a page number from 1, e.g. `/history last 2`; `\(words[1])` is not one.")
                }
                return Command(kind: .history(.last(page: page)), options: options)
            default:
                throw CommandError(
                    "`/history` shows your last results; `/history last [PAGE]` shows the last one whole; `/history clear` deletes your history. Nothing else goes after it."
                )
            }
        case .ledger:
            let (options, text) = try scanned()
            return Command(kind: .ledger(try Self.parseLedger(text)), options: options)
        case .council:
            let (options, text) = try scanned()
            guard text.trimmingWhitespace().isEmpty else { throw CommandError("`/council` takes nothing after it: it shows each model's record.") }
            return Command(kind: .council, options: options)
        case .usage:
            let (options, text) = try scanned()
            return Command(kind: .usage(try Self.parseUsage(text)), options: options)
        case .admin:
            let (options, text) = try scanned()
            return Command(kind: .admin(try Self.parseAdmin(text)), options: options)
        case .help:
            let (options, text) = try scanned()
            let topic = text.split(whereSeparator: \.isWhitespace).first.map { String($0.drop(while: { $0 == "/" })).lowercased() }
            return Command(kind: .help(topic: topic), options: options)
        }
    }

    /// `/ledger [WORDS]`, `/ledger search WORDS`, `/ledger show ID`, `/ledger export`,
    /// `/ledger mark ID true|false|partly|right|wrong`. An id may be written `#12`.
    static func parseLedger(_ text: String) throws(CommandError) -> LedgerSubcommand {
        let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        func id(_ word: String?, usage: String) throws(CommandError) -> Int64 {
            guard let word, let id = Int64(word.hasPrefix("#") ? String(word.dropFirst()) : word), id > 0 else {
                throw CommandError("Give the fact-check's number, as `/ledger` lists it: \(usage).")
            }
            return id
        }
        switch words.first?.lowercased() {
        case nil: return .search(words: [])
        case "search": return .search(words: Array(words.dropFirst()))
        case "export":
            guard words.count == 1 else { throw CommandError("`/ledger export` takes nothing after it: it writes the team's whole ledger.") }
            return .export
        case "show":
            guard words.count <= 2 else { throw CommandError("`/ledger show` takes one number, for example `/ledger show 12`.") }
            return .show(id: try id(words.dropFirst().first, usage: "`/ledger show 12`"))
        case "mark":
            let usage = "`/ledger mark 12 false`"
            let entry = try id(words.dropFirst().first, usage: usage)
            let said = words.count == 3 ? words[2].lowercased() : ""
            if said == "right" { return .mark(id: entry, as: .right) }
            if said == "wrong" { return .mark(id: entry, as: .wrong) }
            guard let verdict = Verdict(rawValue: said), verdict != .unverifiable else {
                throw CommandError("Say what the right verdict was: true, false or partly (or right / wrong for the recorded one), for example \(usage).")
            }
            return .mark(id: entry, as: .verdict(verdict))
        default:
            return .search(words: words)
        }
    }

    /// `/rewrite formal …`: the first word is a style when it names one (`clearer` = default).
    static func splitStyle(_ text: String) -> (RewriteStyle?, String) {
        let (first, remaining) = text.splitFirstWord()
        let key = first.lowercased().trimmingSuffix(":")
        if let style = RewriteStyle(rawValue: key) { return (style, remaining) }
        if key == "clearer" { return (nil, remaining) }
        return (nil, text)
    }

    static func parseCustomAdmin(_ rest: Substring) throws(CommandError) -> Command {
        let usage = "Usage: `/command add NAME TEMPLATE`, `/command list`, `/command remove NAME`."
        let (sub, afterSub) = String(rest.trimmingWhitespace()).splitFirstWord()
        switch sub.lowercased() {
        case "add":
            let (name, template) = afterSub.splitFirstWord()
            guard !name.isEmpty else {
                throw CommandError("Name the command and give its template: `/command add eli5 Explain like I'm five: {input}`.")
            }
            guard !template.isEmpty else {
                throw CommandError("`/command add \(name)` needs a template after the name, for example `/command add \(name) Explain like I'm five: {input}`.")
            }
            return Command(kind: .command(.add(name: try Names.validate(name, what: "command"), template: template)))
        case "list", "":
            return Command(kind: .command(.list))
        case "remove", "delete", "rm":
            let (name, _) = afterSub.splitFirstWord()
            guard !name.isEmpty else { throw CommandError("Which command? `/command remove NAME`.") }
            return Command(kind: .command(.remove(name: name.lowercased())))
        default:
            throw CommandError("Unknown `/command \(sub)`. \(usage)")
        }
    }

    /// `/usage`, `/usage team`, either with a month (`2026-11`).
    static func parseUsage(_ text: String) throws(CommandError) -> UsageSubcommand {
        var usage = UsageSubcommand(team: false)
        for word in text.split(whereSeparator: \.isWhitespace).map({ $0.lowercased() }) {
            if word == "team", !usage.team {
                usage.team = true
            } else if word == "me" || word == "mine" {
                continue
            } else if let month = UsageMonth(word), usage.month == nil {
                usage.month = month
            } else {
                throw CommandError("`/usage` does not know `\(word)`. Usage: `/usage` (yours this month), `/usage team`, `/usage team 2026-11` (a month, UTC).")
            }
        }
        return usage
    }

    /// `/admin`, `/admin grant USER`, `/admin revoke USER`. The user is the rest of the line as
    /// typed (a mention may be a display name with spaces), resolved by the run.
    static func parseAdmin(_ text: String) throws(CommandError) -> AdminSubcommand {
        let (sub, user) = text.splitFirstWord()
        switch sub.lowercased() {
        case "", "show", "list":
            guard user.isEmpty else { throw CommandError("`/admin \(sub)` takes nothing after it.") }
            return .show
        case "grant", "revoke":
            guard !user.isEmpty else {
                throw CommandError("Name the person, as a mention: `/admin \(sub.lowercased()) @ann`.")
            }
            return sub.lowercased() == "grant" ? .grant(user: user) : .revoke(user: user)
        case "budget":
            return .budget(try parseBudget(user))
        case "console":
            guard user.isEmpty else { throw CommandError("`/admin console` takes nothing after it: it sends you a sign-in link for this team.") }
            return .console
        default:
            throw CommandError(
                "Unknown `/admin \(sub)`. Usage: `/admin` (who administers this team), `/admin grant @USER`, `/admin revoke @USER`, `/admin budget [DOLLARS|reset]`, `/admin console` (a sign-in link to the team's web console)."
            )
        }
    }

    /// `/admin budget`, `/admin budget 20` (or `$20`, `20.50`, `20 USD`), `/admin budget reset`.
    static func parseBudget(_ text: String) throws(CommandError) -> BudgetChange {
        var words = text.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
        if words.last == "usd" || words.last == "dollars" { words.removeLast() }
        guard let word = words.first else { return .show }
        if words.count == 1, resetWords.contains(word) { return .reset }
        let figure = word.hasPrefix("$") ? String(word.dropFirst()) : word
        guard words.count == 1, let dollars = Double(figure), dollars.isFinite, dollars > 0, dollars <= 1_000_000 else {
            throw CommandError(
                "A budget is a positive number of US dollars a month, at most 1000000: `/admin budget 20`; `/admin budget reset` goes back to the operator's default."
            )
        }
        return .set(dollars)
    }

    /// What resets a setting (or, alone, all of them). `off` is not one: it is a retention.
    static let resetWords: Set<String> = ["reset", "clear", "default", "none"]

    static func parseSettings(_ text: String) throws(CommandError) -> SettingsSubcommand {
        var words = text.split(whereSeparator: \.isWhitespace).map { String($0) }
        guard !words.isEmpty else { return .show }
        var target = SettingsTarget.me
        if let first = words.first, let scope = SettingsTarget(rawValue: first.lowercased()) {
            target = scope
            words.removeFirst()
        }
        let keys = SettingsKey.allCases.map(\.rawValue).joined(separator: ", ")
        guard let keyWord = words.first else {
            throw CommandError("Say which setting: \(keys). For example `/settings \(target == .channel ? "channel " : "")lang fr`.")
        }
        if Self.resetWords.contains(keyWord.lowercased()) {
            guard words.count == 1 else {
                throw CommandError(
                    "`/settings \(target == .channel ? "channel " : "")reset` takes nothing after it; to reset one setting say which: `/settings lang reset`.")
            }
            return .reset(target)
        }
        guard let key = SettingsKey(rawValue: keyWord.lowercased()) else {
            throw CommandError("Unknown setting `\(keyWord)`. Settings are \(keys); for example `/settings tier mid`.")
        }
        let valueWords = words.dropFirst()
        guard !valueWords.isEmpty else {
            throw CommandError("Give a value for \(key.rawValue): \(Self.allowedValues(key)), or `reset`.")
        }
        let value = valueWords.joined(separator: " ")
        if Self.resetWords.contains(value.lowercased()) {
            return .set(target, key, value: nil)
        }
        switch key {
        case .lang:
            guard let language = Language.lookup(value) else {
                throw CommandError("Unknown language `\(value)`. Use an ISO code or an English name, for example `fr` or `French`.")
            }
            return .set(target, key, value: language.code)
        case .tier:
            guard let tier = Tier(rawValue: value.lowercased()) else {
                throw CommandError("Unknown tier `\(value)`. Tiers are \(Self.allowedValues(.tier)).")
            }
            return .set(target, key, value: tier.rawValue)
        case .retention:
            guard let retention = Retention(rawValue: value.lowercased()) else {
                throw CommandError("Unknown retention `\(value)`. Choose \(Self.allowedValues(.retention)).")
            }
            return .set(target, key, value: retention.rawValue)
        case .voice:
            guard let action = VoiceAction(rawValue: value.lowercased()) else {
                throw CommandError("Unknown voice setting `\(value)`. Choose \(Self.allowedValues(.voice)).")
            }
            return .set(target, key, value: action.rawValue)
        case .receipts:
            switch value.lowercased() {
            case "on", "yes", "true": return .set(target, key, value: "on")
            case "off", "no", "false": return .set(target, key, value: "off")
            default: throw CommandError("Unknown receipts setting `\(value)`. Choose \(Self.allowedValues(.receipts)).")
            }
        }
    }

    static func allowedValues(_ key: SettingsKey) -> String {
        switch key {
        case .lang: "an ISO code or English language name"
        case .tier: Tier.allCases.map(\.rawValue).joined(separator: ", ")
        case .retention: "full (keep texts), metadata (no texts), off (no history)"
        case .voice: "transcript (the words), ai (answer them), tribunal (fact-check them)"
        case .receipts: "on (each reply's footer shows its tokens and cost), off"
        }
    }

    /// The longest unknown command name echoed whole.
    static let echoedNameLimit = 64

    /// "Unknown command /transalte. Did you mean /translate?"
    package static func unknownCommandMessage(_ word: String, customCommands: Set<String>) -> String {
        // A name is echoed whole up to 64 characters: past that it is no typo of a command (and
        // a pasted paragraph would fill the reply), so it is cut and nothing is suggested.
        guard word.count <= Self.echoedNameLimit else {
            return "Unknown command `/\(word.prefix(Self.echoedNameLimit))…`. Type `/help` for the list of commands."
        }
        let candidates = CommandTable.all.flatMap { [$0.name] + $0.aliases } + customCommands.sorted()
        let best =
            candidates
            .map { ($0, EditDistance.between(word, $0)) }
            .filter { $0.1 <= max(1, min(3, $0.0.count / 3 + 1)) }
            .min { $0.1 < $1.1 }
        var message = "Unknown command `/\(word)`."
        if let (suggestion, _) = best { message += " Did you mean `/\(suggestion)`?" }
        return message + " Type `/help` for the list of commands."
    }
}

/// Validation of chain and custom command names.
enum Names {
    static func validate(_ raw: String, what: String) throws(CommandError) -> String {
        let name = raw.lowercased()
        let valid =
            name.count <= 32 && name.first.map { $0.isASCII && $0.isLetter } == true
            && name.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "_" }
        guard valid else {
            throw CommandError("`\(raw)` is not a valid \(what) name: use a letter, then letters, digits, - or _ (32 at most).")
        }
        return name
    }
}

/// A translation target: an ISO 639-1 code and its English name. It sits beside the parser
/// because what it knows is what people type: codes, English names and other spellings.
public struct Language: Sendable, Hashable, Codable {
    public var code: String
    public var name: String

    public init(code: String, name: String) {
        self.code = code
        self.name = name
    }

    public static let english = Language(code: "en", name: "English")

    /// Looks a language up by ISO code or English name, case-insensitively ("fr", "French", "pt-BR").
    public static func lookup(_ word: String) -> Language? {
        let key = word.lowercased()
        if let name = table[key] { return Language(code: key, name: name) }
        if let (code, name) = table.first(where: { $0.value.lowercased() == key }) {
            return Language(code: code, name: name)
        }
        if let alias = aliases[key], let name = table[alias] { return Language(code: alias, name: name) }
        return nil
    }

    /// Codes that are also everyday English words: taken as a language only when that is clearly
    /// meant (`to it`, `it:`, or followed by a capitalised word). `/translate it is raining`
    /// translates "it is raining".
    public static let ambiguousCodes: Set<String> = ["it", "no", "is", "am", "be", "my", "so", "he", "hi", "id", "la", "el"]

    /// ISO 639-1 code → English name. Region variants use BCP-47 (`pt-br`, `zh-tw`).
    static let table: [String: String] = [
        "af": "Afrikaans", "am": "Amharic", "ar": "Arabic", "az": "Azerbaijani", "be": "Belarusian",
        "bg": "Bulgarian", "bn": "Bengali", "bs": "Bosnian", "ca": "Catalan", "cs": "Czech",
        "cy": "Welsh", "da": "Danish", "de": "German", "el": "Greek", "en": "English",
        "eo": "Esperanto", "es": "Spanish", "et": "Estonian", "eu": "Basque", "fa": "Persian",
        "fi": "Finnish", "fil": "Filipino", "fr": "French", "ga": "Irish", "gl": "Galician",
        "gu": "Gujarati", "he": "Hebrew", "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian",
        "hy": "Armenian", "id": "Indonesian", "is": "Icelandic", "it": "Italian", "ja": "Japanese",
        "ka": "Georgian", "kk": "Kazakh", "km": "Khmer", "kn": "Kannada", "ko": "Korean",
        "la": "Latin", "lt": "Lithuanian", "lv": "Latvian", "mk": "Macedonian", "ml": "Malayalam",
        "mn": "Mongolian", "mr": "Marathi", "ms": "Malay", "mt": "Maltese", "my": "Burmese",
        "ne": "Nepali", "nl": "Dutch", "no": "Norwegian", "pa": "Punjabi", "pl": "Polish",
        "ps": "Pashto", "pt": "Portuguese", "pt-br": "Brazilian Portuguese", "ro": "Romanian",
        "ru": "Russian", "si": "Sinhala", "sk": "Slovak", "sl": "Slovenian", "so": "Somali",
        "sq": "Albanian", "sr": "Serbian", "sv": "Swedish", "sw": "Swahili", "ta": "Tamil",
        "te": "Telugu", "th": "Thai", "tl": "Tagalog", "tr": "Turkish", "uk": "Ukrainian",
        "ur": "Urdu", "uz": "Uzbek", "vi": "Vietnamese", "yi": "Yiddish", "zh": "Chinese",
        "zh-tw": "Traditional Chinese", "zu": "Zulu",
    ]

    /// Other names people type.
    static let aliases: [String: String] = [
        "farsi": "fa", "mandarin": "zh", "chinese-simplified": "zh", "simplified-chinese": "zh",
        "chinese-traditional": "zh-tw", "brazilian": "pt-br", "pt_br": "pt-br", "zh_tw": "zh-tw",
        "nb": "no", "bokmal": "no", "bokmål": "no", "iw": "he", "flemish": "nl", "castilian": "es",
        "deutsch": "de", "español": "es", "espanol": "es", "français": "fr", "francais": "fr",
        "italiano": "it", "português": "pt", "portugues": "pt", "русский": "ru", "日本語": "ja",
        "中文": "zh", "한국어": "ko", "nederlands": "nl", "polski": "pl", "türkçe": "tr",
        "українська": "uk", "svenska": "sv",
    ]
}

/// Reads the optional target language at the start of `/translate`'s text.
///
/// Forms: `fr Hello`, `French Hello`, `to French Hello`, `fr: Hello`, `Brazilian Portuguese Olá`.
/// Codes that are also English words (`it`, `no`…) count as a language only with `to`, a colon,
/// alone, or before a capitalised word: `/translate it is raining` translates "it is raining".
enum LanguagePrefix {
    static func split(_ text: String) -> (Language?, String) {
        var words = text.split(maxSplits: 3, omittingEmptySubsequences: true, whereSeparator: \.isWhitespace)
        guard !words.isEmpty else { return (nil, text) }
        var consumed = 0
        var explicit = false
        if words[0].lowercased() == "to", words.count > 1 {
            explicit = true
            consumed = 1
            words.removeFirst()
        }
        // Two-word names first ("Brazilian Portuguese"), then one word.
        if words.count >= 2, let language = Language.lookup("\(words[0]) \(words[1].trimmingSuffix(":"))") {
            return (language, remainder(of: text, afterWords: consumed + 2))
        }
        let first = String(words[0])
        let hasColon = first.hasSuffix(":")
        let key = first.trimmingSuffix(":")
        guard let language = Language.lookup(key) else { return (nil, text) }
        let isCode = key.lowercased() == language.code
        if isCode, Language.ambiguousCodes.contains(language.code), !explicit, !hasColon {
            let next = words.count > 1 ? words[1] : nil
            let nextIsCapitalised = next?.first.map { $0.isUppercase } ?? true
            if !nextIsCapitalised { return (nil, text) }
        }
        return (language, remainder(of: text, afterWords: consumed + 1))
    }

    /// The text after the first `count` words, with its own spacing and newlines.
    private static func remainder(of text: String, afterWords count: Int) -> String {
        var index = text.startIndex
        for _ in 0..<count {
            index = text[index...].firstIndex { !$0.isWhitespace } ?? text.endIndex
            index = text[index...].firstIndex(where: \.isWhitespace) ?? text.endIndex
        }
        return String(text[index...].trimmingWhitespace())
    }
}

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

extension StringProtocol {
    /// The text without leading and trailing whitespace or newlines.
    package func trimmingWhitespace() -> SubSequence {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map { index(after: $0) } ?? start
        return self[start..<end]
    }

    /// Drops spaces and tabs (not newlines) at the end.
    func trimmingTrailingHorizontalSpace() -> SubSequence {
        var end = endIndex
        while end > startIndex {
            let before = index(before: end)
            guard self[before] == " " || self[before] == "\t" else { break }
            end = before
        }
        return self[startIndex..<end]
    }

    /// The first whitespace-delimited word and the rest (trimmed, newlines inside kept).
    func splitFirstWord() -> (String, String) {
        let trimmed = trimmingWhitespace()
        guard let end = trimmed.firstIndex(where: \.isWhitespace) else { return (String(trimmed), "") }
        return (String(trimmed[..<end]), String(trimmed[end...].trimmingWhitespace()))
    }

    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : String(self)
    }
}

/// Levenshtein distance, for "did you mean".
package enum EditDistance {
    package static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
