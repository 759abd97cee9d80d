import RelayCore

/// Turns a `QuickRequest` into a `/keyboard/quick` body and its answer into a `QuickResult`.
enum QuickMapping {
    /// The language codes the gateway's translate table knows (contract §2.1). Any other code
    /// is used verbatim as the language *name* in the model's prompt, so for those we send
    /// the English name ("Filipino") rather than a code the model may not recognise ("fil").
    static let serverLanguageCodes: Set<String> = [
        "ja", "es", "fr", "ru", "de", "zh", "ar", "ko", "pt", "it",
        "nl", "tr", "hi", "th", "vi", "uk", "pl", "sv", "he", "en",
    ]

    /// The instruction sent ahead of the text for `extract`, which the gateway has no action for.
    static let extractInstruction = """
        Extract the key facts and the action items from the text below. Answer with a short \
        bulleted list, one line per item: the key facts first, then the action items (with who \
        and when, if the text says). Add nothing else.

        Text:

        """

    static func body(for request: QuickRequest) throws(TribunalError) -> RheaWire.QuickRequest {
        var action = request.action.name
        var text = request.text
        var targetLang = ""
        var style = ""
        switch request.action {
        case .translate(let language):
            targetLang = targetLanguage(language)
        case .rewrite(let rewriteStyle):
            // The gateway reads an empty style as "clearer", which is what nil means here.
            style = rewriteStyle?.rawValue ?? ""
        case .extract:
            action = "freeform"
            try checkExtractLength(request.text)
            text = extractInstruction + request.text
        case .grammar, .summarize, .explain, .freeform:
            break
        }
        try TextLimits.check(text, limit: TextLimits.text, what: "text")
        return RheaWire.QuickRequest(text: text, action: action, targetLang: targetLang, style: style, tier: ConsensusMapping.wireTier(request.tier))
    }

    static func targetLanguage(_ language: Language) -> String {
        let code = language.code.lowercased()
        return serverLanguageCodes.contains(code) ? code : language.name
    }

    /// Names the user's own length and what is left for it, not the instruction's share.
    private static func checkExtractLength(_ text: String) throws(TribunalError) {
        let room = TextLimits.text - TextLimits.length(extractInstruction)
        let count = TextLimits.length(text)
        if count > room {
            throw .rejected(
                detail:
                    "the text is \(count) characters long; extract allows \(room) characters (the backend's limit is \(TextLimits.text) including its instructions). Shorten it and try again."
            )
        }
    }

    static func result(from response: RheaWire.QuickResponse, measured: Duration, url: String) throws(TribunalError)
        -> QuickResult
    {
        guard let text = response.text else {
            throw .malformedResponse(url: url, reason: "/keyboard/quick answered without a text field")
        }
        if let detail = ProviderFailure.detail(in: text) {
            throw .providerFailed(detail: detail)
        }
        let model = response.model?.trimmingWhitespace
        return QuickResult(
            text: text.trimmingWhitespace,
            model: (model?.isEmpty ?? true) ? nil : model,
            elapsed: ConsensusMapping.elapsed(response.elapsedS, measured: measured))
    }
}

/// The gateway reports model failures as 200 answers whose text starts with `Error:`.
enum ProviderFailure {
    static let maxDetailLength = 300

    /// The text after `Error:`, trimmed and shortened, or nil when `text` is a real answer.
    static func detail(in text: String) -> String? {
        let trimmed = text.trimmingWhitespace
        guard trimmed.hasPrefix("Error:") else { return nil }
        let detail = String(trimmed.dropFirst("Error:".count)).trimmingWhitespace
        if detail.isEmpty { return "unknown error" }
        let line = detail.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.count > maxDetailLength ? String(line.prefix(maxDetailLength - 1)) + "…" : line
    }
}
