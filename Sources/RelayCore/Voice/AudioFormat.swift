/// The audio container a clip's first bytes announce: what the relay checks before it spends a
/// call to the transcription service, and what it names the file in the request (services such
/// as OpenAI's pick the decoder by the file name's extension).
///
/// Only the formats the transcription endpoints accept; anything else is refused as not audio,
/// whatever the platform declared its type to be.
public struct AudioFormat: Sendable, Hashable {
    /// The file name extension the request gives (`ogg`).
    public var fileExtension: String
    public var mimeType: String

    /// The format `bytes` starts like, or nil when it is none of them.
    public static func sniff(_ bytes: [UInt8]) -> AudioFormat? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        let ascii = { (text: String) in Array(text.utf8) }
        if starts(ascii("OggS")) { return AudioFormat(fileExtension: "ogg", mimeType: "audio/ogg") }
        if starts(ascii("RIFF")), starts(ascii("WAVE"), at: 8) { return AudioFormat(fileExtension: "wav", mimeType: "audio/wav") }
        if starts(ascii("fLaC")) { return AudioFormat(fileExtension: "flac", mimeType: "audio/flac") }
        if starts(ascii("ftyp"), at: 4) { return AudioFormat(fileExtension: "m4a", mimeType: "audio/mp4") }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return AudioFormat(fileExtension: "webm", mimeType: "audio/webm") }
        if starts(ascii("ID3")) { return AudioFormat(fileExtension: "mp3", mimeType: "audio/mpeg") }
        // An MPEG audio frame without a tag: 11 bits of frame sync.
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 { return AudioFormat(fileExtension: "mp3", mimeType: "audio/mpeg") }
        return nil
    }
}
