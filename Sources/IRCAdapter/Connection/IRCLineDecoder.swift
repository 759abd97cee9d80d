import NIOCore

/// Cuts the server's bytes into lines (LF, an optional CR before it), each at most
/// `maximumLength` bytes: a server that sends a longer one, or bytes without an end, ends the
/// session (`IRCClient` reconnects) instead of growing a buffer without bound. 8 191 bytes of
/// IRCv3 tags and a 512-byte message fit.
struct IRCLineDecoder: NIOSingleStepByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    struct LineTooLong: Error, CustomStringConvertible {
        var description: String { "the server sent a line longer than \(IRCLineDecoder.maximumLength) bytes" }
    }

    static let maximumLength = 8_704

    mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
            if view.count > Self.maximumLength { throw LineTooLong() }
            return nil
        }
        let length = view.distance(from: view.startIndex, to: newline)
        guard length <= Self.maximumLength + 1 else { throw LineTooLong() }
        var line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        if line.readableBytesView.last == UInt8(ascii: "\r") { line = line.getSlice(at: line.readerIndex, length: line.readableBytes - 1)! }
        return line
    }

    mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
        try decode(buffer: &buffer)
    }
}

extension ByteBuffer {
    /// The line as text: UTF-8 when it is that, else Latin-1 (older clients' encoding), so a
    /// byte no decoder takes never drops a line.
    var ircText: String {
        let bytes = readableBytesView
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}
