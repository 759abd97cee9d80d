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
