import RelayCore

/// Builders for the few Block Kit blocks replies use.
///
/// Every `mrkdwn` text object is `verbatim`, so Slack does not turn a bare `@channel`, a
/// channel name or an address in model output into a mention or a link; the text must already
/// be escaped (`SlackMrkdwn.escape`).
enum SlackBlocks {
    static func mrkdwn(_ escaped: String) -> JSONValue {
        ["type": "mrkdwn", "text": .string(escaped), "verbatim": true]
    }

    static func plainText(_ text: String) -> JSONValue {
        ["type": "plain_text", "text": .string(text), "emoji": true]
    }

    /// A section of at most `SlackLimits.sectionText`.
    static func section(_ escaped: String) -> JSONValue {
        ["type": "section", "text": mrkdwn(escaped)]
    }

    /// A context block: small grey text, one element per entry (at most 10).
    static func context(_ escaped: [String]) -> JSONValue {
        ["type": "context", "elements": .array(escaped.map(mrkdwn))]
    }

    static func actions(_ elements: [JSONValue]) -> JSONValue {
        ["type": "actions", "elements": .array(elements)]
    }

    static func button(_ label: String, actionID: String, value: String, primary: Bool = false) -> JSONValue {
        var button: [String: JSONValue] = [
            "type": "button", "text": plainText(label), "action_id": .string(actionID), "value": .string(value),
        ]
        if primary { button["style"] = "primary" }
        return .object(button)
    }

    /// Context blocks holding `lines` (raw text, escaped here): lines are joined into elements
    /// that fit a section's limit, a line too long for one is split, and blocks take at most
    /// ten elements each.
    static func contextBlocks(lines: [String]) -> [JSONValue] {
        var elements: [String] = []
        var current = ""
        for line in lines {
            for piece in SlackTextSplitter.split(line, limit: SlackLimits.sectionText) {
                let escaped = SlackMrkdwn.escape(piece)
                if current.isEmpty {
                    current = escaped
                } else if current.slackLength + 1 + escaped.slackLength <= SlackLimits.sectionText {
                    current += "\n" + escaped
                } else {
                    elements.append(current)
                    current = escaped
                }
            }
        }
        if !current.isEmpty { elements.append(current) }
        return stride(from: 0, to: elements.count, by: SlackLimits.contextElements).map {
            context(Array(elements[$0..<min($0 + SlackLimits.contextElements, elements.count)]))
        }
    }
}
