import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
public import RelayCore
import RelayHTTP
public import RelayPipeline

/// Answers the relay's questions about a Discord conversation: for now only the audio of a
/// voice message, downloaded from the configured CDN (`discord.cdnURL`). Admins and threads stay
/// as the event brought them (Discord's interactions carry permissions; threads are not read).
public struct DiscordConversationReader: ConversationReader {
    let transport: HTTPTransport
    /// The CDN base without a trailing slash.
    let cdnURL: String
    let logger: Logger
    /// The whole download.
    static let downloadTimeout: Duration = .seconds(60)

    init(transport: HTTPTransport, cdnURL: String, logger: Logger) {
        self.transport = transport
        var base = cdnURL
        while base.hasSuffix("/") { base.removeLast() }
        self.cdnURL = base
        self.logger = logger
    }

    public func isAdmin(_ event: Event) async -> Bool { false }

    public func threadMessages(_ event: Event, limit: Int) async -> [String] { [] }

    /// The attachment's bytes, from `<cdnURL>/attachments/…` only: a URL on any other host, or
    /// that leaves that path, is refused without a request.
    public func audio(_ clip: VoiceClip, maxBytes: Int) async throws(VoiceFetchError) -> [UInt8] {
        if let size = clip.byteSize, size > maxBytes { throw .tooLarge(limit: maxBytes, size: size) }
        guard Self.isAttachment(clip.file, cdn: cdnURL) else {
            throw .unavailable(reason: "attachment: the URL is not on the configured CDN (discord.cdnURL)")
        }
        var request = HTTPClientRequest(url: clip.file)
        request.method = .GET
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        let download: HTTPTransport.Download
        do throws(HTTPFailure) {
            download = try await transport.download(request, timeout: Self.downloadTimeout, maxBytes: maxBytes)
        } catch {
            throw .unavailable(reason: "attachment: \(error.label)")
        }
        return try download.voiceBytes(limit: maxBytes) { "attachment: the CDN answered HTTP \($0.status)" }
    }

    /// `<cdn>/attachments/<segments>` with plain segments (no `..`, no other host, no user info).
    public static func isAttachment(_ url: String, cdn: String) -> Bool {
        guard let parsed = URLComponents(string: url), let base = URLComponents(string: cdn), parsed.user == nil, parsed.password == nil,
            parsed.scheme?.lowercased() == base.scheme?.lowercased(), parsed.host?.lowercased() == base.host?.lowercased(), parsed.port == base.port
        else { return false }
        let prefix = base.path + "/attachments/"
        guard parsed.path.hasPrefix(prefix) else { return false }
        return parsed.path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).allSatisfy {
            !$0.isEmpty && $0 != "." && $0 != ".."
        }
    }
}
