import RelayCore

/// A file someone sent (a voice note), as the fake Bot API keeps it.
struct FakeTelegramFile: Sendable {
    var path: String
    var bytes: [UInt8]
    /// What `getFile` says its `file_size` is.
    var reportedSize: Int
}

extension FakeTelegramBotAPI {
    /// Bots may download files of up to 20 MB; `getFile` refuses larger ones.
    public static let botFileLimit = 20 * 1024 * 1024

    /// The largest file `getFile` hands out: `botFileLimit` as Telegram's own servers, or up to
    /// 2 000 MB as a local Bot API server (`telegram-bot-api --local`) does.
    public var fileLimit: Int {
        get { state.withLock { $0.fileLimit } }
        set { state.withLock { $0.fileLimit = newValue } }
    }

    /// Keeps `bytes` as a file people sent and returns its `file_id`, for an update's `voice`.
    /// `getFile` then answers with its `file_path` (`voice/file_N.oga`) and `file_size` (the real
    /// size unless `reportedSize` says otherwise: a platform's numbers are not always right), and
    /// `GET /file/bot<token>/<file_path>` serves the bytes, as Telegram does.
    public func addFile(_ bytes: [UInt8], kind: String = "voice", reportedSize: Int? = nil) -> String {
        state.withLock { state in
            let number = state.files.count + 1
            let id = "AwACAgIAAxkBAAF\(number)voice"
            let fileExtension = kind == "video_note" ? "mp4" : kind == "audio" ? "mp3" : "oga"
            let folder = kind == "video_note" ? "video_notes" : kind == "audio" ? "music" : "voice"
            state.files[id] = FakeTelegramFile(path: "\(folder)/file_\(number).\(fileExtension)", bytes: bytes, reportedSize: reportedSize ?? bytes.count)
            return id
        }
    }
}

extension FakeTelegramBotAPIState {
    /// `getFile`: a `File` object, or Telegram's refusals.
    func getFile(_ p: JSONValue) -> FakeTelegramAnswer {
        guard let id = p["file_id"]?.stringValue, !id.isEmpty else { return .badRequest("file_id is empty") }
        guard let file = files[id] else { return .badRequest("invalid file_id") }
        if file.bytes.count > fileLimit { return .badRequest("file is too big") }
        var result: [String: JSONValue] = ["file_id": .string(id), "file_unique_id": .string("AgAD\(id.count)"), "file_path": .string(file.path)]
        result["file_size"] = .int(file.reportedSize)
        return .ok(.object(result))
    }

    /// `GET /file/bot<token>/<file_path>`: the bytes; Telegram's JSON 404 for a wrong token or an
    /// unknown path.
    func fileDownload(_ segments: [String]) -> FakeTelegramAnswer {
        let notFound = FakeTelegramAnswer.error(404, "Not Found")
        guard segments.count >= 3, segments[1] == "bot" + token else { return notFound }
        let path = segments.dropFirst(2).joined(separator: "/")
        guard let file = files.values.first(where: { $0.path == path }) else { return notFound }
        return FakeTelegramAnswer(status: 200, json: nil, body: file.bytes, contentType: "application/octet-stream")
    }
}
