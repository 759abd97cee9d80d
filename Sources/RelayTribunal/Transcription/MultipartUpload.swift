import MultipartKit
import NIOCore
import NIOHTTP1
import RelayCore

/// A transcription's multipart form as it is sent: the clip as `file` (named by its sniffed
/// format, which services read), then each field — MultipartKit writes the form around the clip,
/// and the clip's own bytes follow, copied 1 MiB at a time as the connection takes them.
///
/// Serialising the whole form first held a voice note three times over (its bytes, MultipartKit's
/// copy of the part, the body growing by doubling): 20 notes of 30 MB at once peaked 109 MB above
/// the relay's baseline under a 64 MB budget (issue 47, point 4). Streamed, a note is held once.
struct MultipartUpload: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// The form up to the clip's first byte, and from after its last.
    let head: ByteBuffer
    let clip: [UInt8]
    let tail: ByteBuffer

    static let chunk = 1 << 20

    /// - Throws: when MultipartKit cannot write the form (a field it cannot encode).
    init(_ clip: [UInt8], format: AudioFormat, fields: [(String, String)], boundary: String) throws {
        var file = HTTPHeaders()
        file.add(name: "Content-Disposition", value: "form-data; name=\"file\"; filename=\"voice.\(format.fileExtension)\"")
        file.add(name: "Content-Type", value: format.mimeType)
        let parts =
            [MultipartPart(headers: file, body: ByteBuffer())]
            + fields.map { name, value in MultipartPart(headers: ["Content-Disposition": "form-data; name=\"\(name)\""], body: value) }
        // The form with an empty file: the clip goes where that empty body is, right after the
        // file part's headers and their blank line — the first in the form.
        var form = ByteBuffer()
        try MultipartSerializer().serialize(parts: parts, boundary: boundary, into: &form)
        let view = form.readableBytesView
        guard let blank = view.firstRange(of: Array("\r\n\r\n".utf8)) else { throw MultipartUploadError() }
        let split = blank.upperBound - view.startIndex
        head = form.getSlice(at: form.readerIndex, length: split) ?? ByteBuffer()
        tail = form.getSlice(at: form.readerIndex + split, length: form.readableBytes - split) ?? ByteBuffer()
        self.clip = clip
    }

    /// Bytes in all.
    var length: Int { head.readableBytes + clip.count + tail.readableBytes }

    func makeAsyncIterator() -> Iterator { Iterator(upload: self) }

    struct Iterator: AsyncIteratorProtocol {
        let upload: MultipartUpload
        /// Bytes of the whole form handed out so far.
        var sent = 0

        mutating func next() async -> ByteBuffer? {
            let head = upload.head.readableBytes
            let clipEnd = head + upload.clip.count
            if sent == 0, head > 0 {
                sent = head
                return upload.head
            }
            if sent < clipEnd {
                let start = sent - head
                let end = Swift.min(upload.clip.count, start + MultipartUpload.chunk)
                sent = head + end
                return ByteBuffer(bytes: upload.clip[start..<end])
            }
            if sent == clipEnd, upload.tail.readableBytes > 0 {
                sent += upload.tail.readableBytes
                return upload.tail
            }
            return nil
        }
    }
}

/// MultipartKit's form had no blank line after the file part's headers (it always has).
struct MultipartUploadError: Error {}
