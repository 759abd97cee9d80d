import Foundation
import RelayCore

/// An `mxc://<server-name>/<media-id>` URI, checked strictly: both parts become path segments of
/// a request to the configured homeserver, so nothing a sender writes into an event may add a
/// segment (`/`, `..`), a query or another host. The grammar is the spec's: a server name is a
/// DNS name, an IPv4 address or a bracketed IPv6 address, with an optional port; a media id is
/// `[A-Za-z0-9_-]+`.
public struct MatrixContentURI: Sendable, Hashable {
    public let server: String
    public let mediaID: String

    public init?(_ uri: String) {
        let scheme = "mxc://"
        guard uri.hasPrefix(scheme), uri.utf8.count <= 512 else { return nil }
        let parts = uri.dropFirst(scheme.count).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, Self.isServerName(parts[0]), Self.isMediaID(parts[1]) else { return nil }
        server = String(parts[0])
        mediaID = String(parts[1])
    }

    /// `[A-Za-z0-9_-]+`, at most 255 characters.
    static func isMediaID(_ id: Substring) -> Bool {
        !id.isEmpty && id.utf8.count <= 255 && id.unicodeScalars.allSatisfy { $0.isASCII && (Self.isAlphanumeric($0) || $0 == "_" || $0 == "-") }
    }

    /// `hostname [":" port]`: dot-separated labels of letters, digits and `-` (every label
    /// non-empty, so no `.` or `..`), or `[` hex digits, `:` and `.` `]`; a port of 1 to 5 digits.
    static func isServerName(_ name: Substring) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 255 else { return false }
        var host = name
        if let colon = name.lastIndex(of: ":"), !name.hasSuffix("]") {
            let port = name[name.index(after: colon)...]
            guard (1...5).contains(port.count), port.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
            host = name[..<colon]
        }
        if host.hasPrefix("[") {
            let inner = host.dropFirst().dropLast()
            return host.hasSuffix("]") && (2...45).contains(inner.count)
                && inner.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isASCIIHexDigit || $0 == ":" || $0 == ".") }
        }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.unicodeScalars.allSatisfy { $0.isASCII && (Self.isAlphanumeric($0) || $0 == "-") }
        }
    }

    private static func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }
}

/// What an `m.room.message` says about audio: an `m.audio` message (or an `m.file` whose
/// declared type is audio, as some clients send a recording) with its `url`, or with `file`
/// instead (end-to-end encrypted media, which the relay cannot decrypt).
enum MatrixAudio: Sendable, Hashable {
    case clip(VoiceClip)
    case encrypted

    /// The audio `content` carries, as a clip of `origin`; nil when it is no audio message.
    /// Declared numbers come from the sender: only sane ones are kept. A `url` that is no strict
    /// `mxc://` URI is kept as it is, and refused when fetched, with a reply that says so.
    init?(content: MatrixContent, origin: VoiceClip.Origin) {
        let info = content.info
        let mimeType = info?.mimetype
        switch content.msgtype {
        case "m.audio": break
        case "m.file" where mimeType?.lowercased().hasPrefix("audio/") == true: break
        default: return nil
        }
        guard let url = content.url else {
            if content.hasEncryptedFile { self = .encrypted } else { return nil }
            return
        }
        let size = UntrustedNumber.checked(info?.size, in: 0...(4 << 30), source: "matrix", field: "size")
        let milliseconds = UntrustedNumber.checked(info?.duration, in: 0...(7 * 24 * 3_600_000), source: "matrix", field: "duration")
        self = .clip(VoiceClip(file: url, mimeType: mimeType, byteSize: size, duration: milliseconds.map { ($0 + 999) / 1000 }, origin: origin))
    }

    /// The caption an audio message carries (spec v1.10: `body` is a caption when `filename`
    /// is set and differs from it); nil when `body` is only the file's name.
    static func caption(of content: MatrixContent) -> String? {
        guard let filename = content.filename, let body = content.body, body != filename else { return nil }
        let caption = body.trimmingCharacters(in: .whitespacesAndNewlines)
        return caption.isEmpty ? nil : caption
    }

    /// The reply to a command on encrypted audio.
    static let encryptedReply =
        "This voice note is end-to-end encrypted, and Rhea Relay cannot decrypt it. Send it in a room without encryption, or type the text instead."
}
