/// A reply too long for a chat: shown up to a bound of messages, the rest read page by page with
/// `/history last PAGE` (issue 47, point 8).
///
/// Nothing bounded the parts before: a 300 KB answer became 28 Matrix messages, a flood no one
/// reads in a channel. Every platform now shows at most `maxParts` messages of one reply (8: on
/// Discord and Telegram about 32 000 characters, on Slack 28 000, on Mattermost 131 000, on Matrix
/// up to 192 000 bytes); the cut one ends in " …" and a note naming the page to read on from.
/// The whole answer stays in the asker's history, as every result does when their retention is
/// `full`.
public enum LongReply {
    /// Messages of one reply a chat shows at most.
    public static let maxParts = 8
    /// Characters of a result one `/history last PAGE` shows: 8 000 fit in `maxParts` messages on
    /// every platform (Discord's plain messages, the smallest, hold 2 000).
    public static let pageCharacters = 8_000

    /// Page `page` (from 1) of `text`, and the number of pages; nil past the last page.
    public static func page(_ page: Int, of text: String) -> (text: Substring, pages: Int)? {
        let pages = max(1, (text.count + pageCharacters - 1) / pageCharacters)
        guard page >= 1, page <= pages else { return nil }
        let start = text.index(text.startIndex, offsetBy: (page - 1) * pageCharacters)
        let end = text.index(start, offsetBy: pageCharacters, limitedBy: text.endIndex) ?? text.endIndex
        return (text[start..<end], pages)
    }

    /// The page that holds character `offset` of a result.
    public static func page(holding offset: Int) -> Int { max(0, offset) / pageCharacters + 1 }

    /// `reply` with only its body's first `keeping` characters (back to the last line or word
    /// break, when there is one not far back), ending in " …", and a note: for a model's result,
    /// which history keeps, the `/history last` page to read on from; for the relay's own long
    /// texts (an export, a list), which history does not keep, only that it was cut.
    public static func cut(_ reply: Reply, keeping: Int, maxParts: Int = maxParts) -> Reply {
        var kept = reply.body.prefix(max(0, keeping))
        // Back to a break within the last 200 characters, so no word is cut in two.
        if kept.count < reply.body.count, let space = kept.suffix(200).lastIndex(where: \.isWhitespace) {
            kept = kept[..<space]
        }
        var cut = reply
        cut.body = String(kept) + " …"
        let said = "Cut here: the whole answer is longer than \(maxParts) messages."
        cut.notes.append(
            reply.kind == .result ? said + " Whoever asked reads on with `/history last \(page(holding: kept.count))`." : said)
        return cut
    }
}
