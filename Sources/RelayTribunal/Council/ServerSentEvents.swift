/// Reads a `text/event-stream` body (the WHATWG server-sent events format) as it arrives: the
/// `data` of each event, its lines joined with "\n".
///
/// Lines end in CRLF, LF or CR; a blank line ends an event; `:` lines are comments (keep-alives);
/// fields other than `data` (`event`, `id`, `retry`) are read past, as an OpenAI-compatible stream
/// uses none. One leniency: an event the body ends inside, without its blank line, is still read
/// at `finish()` — some servers end on `data: [DONE]` alone.
struct ServerSentEvents: Sendable {
    private var line: [UInt8] = []
    private var data: [String] = []
    private var hasData = false
    /// The last byte was a CR: an LF right after it ends no second line.
    private var afterCR = false

    /// The events completed by `bytes`, in order.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [String] {
        var events: [String] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\r"):
                afterCR = true
                endLine(into: &events)
            case UInt8(ascii: "\n"):
                endLine(into: &events)
            default:
                line.append(byte)
            }
        }
        return events
    }

    /// The body ended: the event under way, if it has data.
    mutating func finish() -> [String] {
        var events: [String] = []
        if !line.isEmpty { endLine(into: &events) }
        if hasData { events.append(dispatch()) }
        return events
    }

    private mutating func endLine(into events: inout [String]) {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else {
            if hasData { events.append(dispatch()) }
            return
        }
        if line.first == UInt8(ascii: ":") { return }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        guard line[..<colon].elementsEqual("data".utf8) else { return }
        var value = line[colon...].dropFirst()
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        data.append(String(decoding: value, as: UTF8.self))
        hasData = true
    }

    private mutating func dispatch() -> String {
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
        }
        return data.joined(separator: "\n")
    }
}
