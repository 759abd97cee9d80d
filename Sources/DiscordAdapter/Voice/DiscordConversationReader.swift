import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
public import RelayCore
import RelayHTTP
public import RelayPipeline
import RelayPlatform

/// Answers the relay's questions about a Discord conversation: whether a member manages the
/// server, for what came by the gateway (a reaction, a mention; an interaction carries the
/// member's permissions already), and the audio of a voice message, downloaded from the
/// configured CDN (`discord.cdnURL`). Threads are not read.
public struct DiscordConversationReader: ConversationReader {
    let api: any DiscordREST
    let transport: HTTPTransport
    /// The CDN base without a trailing slash.
    let cdnURL: String
    let logger: Logger
    /// The whole download.
    static let downloadTimeout: Duration = .seconds(60)

    init(api: any DiscordREST, transport: HTTPTransport, cdnURL: String, logger: Logger) {
        self.api = api
        self.transport = transport
        var base = cdnURL
        while base.hasSuffix("/") { base.removeLast() }
        self.cdnURL = base
        self.logger = logger
    }

    public func isAdmin(_ event: Event) async -> Bool? {
        // A direct message is its person's own team.
        if event.team.hasPrefix("dm:") { return true }
        do throws(DiscordAPIError) {
            return try await api.administers(guildID: event.team, userID: event.user)
        } catch {
            logger.notice("discord: could not tell whether a member manages the server", metadata: ["reason": "\(error.reason)"])
            return nil
        }
    }

    public var platformAdmins: String { "Discord members with Manage Server or Administrator" }

    /// A mention as Discord writes it (`<@123>`, `<@!123>`: what picking a person after `@`
    /// puts in a command's text), checked with `GET /users/{id}`.
    public func user(mentioned mention: String, in event: Event) async -> MentionedUserLookup {
        var id = Substring(mention)
        guard id.hasPrefix("<@"), id.hasSuffix(">") else {
            return .nobody("`\(mention)` is not a mention of anyone: type `@` and pick the person from the list, so Discord names them.")
        }
        id = id.dropFirst(2).dropLast()
        if id.hasPrefix("!") { id = id.dropFirst() }
        do throws(DiscordAPIError) {
            let user = try await api.user(id: String(id))
            let name = "@" + (user.globalName ?? user.username)
            return user.isBot ? .bot(name: name) : .person(id: user.id, name: name)
        } catch {
            if case .refused(_, let refusal) = error, refusal.status == 404 { return .nobody("Discord knows no user \(mention).") }
            if case .malformed = error { return .nobody("`\(mention)` is not a mention of anyone: type `@` and pick the person from the list.") }
            return .unavailable("Discord did not answer `GET /users/{id}` (\(error.reason))")
        }
    }

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
