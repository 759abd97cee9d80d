/// A translation target: an ISO 639-1 code and its English name.
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
