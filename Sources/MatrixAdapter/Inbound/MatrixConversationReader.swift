import Logging
public import RelayCore
import RelayHTTP
public import RelayPipeline
import RelayPlatform

/// Answers the relay's questions about a Matrix room, when a command needs them: whether the
/// asker administers the room (their power level allows changing the room's power levels), the
/// messages of a thread (`/relations`, its root first), and the audio of a voice note (from the
/// configured homeserver's media API, its `mxc://` URI checked first).
public struct MatrixConversationReader: ConversationReader {
    let api: any MatrixAPI
    let logger: Logger

    public var platformAdmins: String { "the Matrix room's members with power level 50 or more (moderators and admins)" }

    /// A user id typed as it is (`@ann:example.org`), or the one person a pill names
    /// (`m.mentions`), checked with the homeserver (`GET /profile/{user}`). The bot itself is a
    /// bot; other bots look like people to Matrix.
    public func user(mentioned mention: String, in event: Event) async -> MentionedUserLookup {
        let named = event.mentions.filter { $0.id != event.user }
        let id: String
        if MatrixID.isUser(mention) {
            id = mention
        } else if named.count == 1 {
            id = named[0].id
        } else {
            return .nobody("`\(mention)` names nobody: write the person's Matrix id (`@ann:example.org`), or mention them with a pill.")
        }
        do throws(MatrixAPIError) {
            if id == (try await api.whoami()) { return .bot(name: id) }
            guard try await api.userExists(id) else { return .nobody("The homeserver knows no user \(id).") }
            return .person(id: id, name: id)
        } catch {
            return .unavailable("the homeserver did not answer (\(error.reason))")
        }
    }

    public func isAdmin(_ event: Event) async -> Bool? {
        do throws(MatrixAPIError) {
            if try await api.powerLevels(room: event.channel).administers(event.user) { return true }
            // From room version 12 on, a room's creators outrank every level and are listed in
            // no `users` map: the create event names them.
            return try await api.roomCreators(room: event.channel).contains(event.user)
        } catch {
            logger.notice("matrix: could not tell whether a user administers a room", metadata: ["reason": "\(error.reason)"])
            return nil
        }
    }

    /// The whole download of a voice note.
    static let downloadTimeout: Duration = .seconds(60)

    /// A voice note's bytes, from the configured homeserver only, with the bot's token: the
    /// `mxc://` URI's server name and media id are checked to be plain path segments first.
    public func audio(_ clip: VoiceClip, maxBytes: Int) async throws(VoiceFetchError) -> [UInt8] {
        if let size = clip.byteSize, size > maxBytes { throw .tooLarge(limit: maxBytes, size: size) }
        guard let uri = MatrixContentURI(clip.file) else {
            throw .unavailable(reason: "media: the url is not an mxc:// URI of a plain server name and media id")
        }
        let download: HTTPTransport.Download
        do throws(MatrixAPIError) {
            download = try await api.media(uri, maxBytes: maxBytes, timeout: Self.downloadTimeout)
        } catch {
            throw .unavailable(reason: error.reason)
        }
        return try download.voiceBytes(limit: maxBytes) { answer in
            let errcode = MatrixErrorBody.read(answer.body)?.errcode ?? "no errcode"
            return "media: the homeserver answered HTTP \(answer.status) (\(MatrixRefusal.bounded(errcode)))"
        }
    }

    /// The voice note a thread's root is, for a command later in the thread (Element's "Reply in
    /// thread" on a voice message); nil when it is none or cannot be read, and for encrypted
    /// media, which the relay cannot decrypt (the command then runs as on any thread).
    public func threadVoice(_ event: Event) async -> VoiceClip? {
        guard let root = event.thread else { return nil }
        do throws(MatrixAPIError) {
            let first = try await api.event(room: event.channel, id: root)
            guard first.type == "m.room.message", case .clip(let clip)? = MatrixAudio(content: first.content, origin: .repliedTo) else { return nil }
            return clip
        } catch {
            logger.notice("matrix: could not read a thread's root for its audio", metadata: ["reason": "\(error.reason)"])
            return nil
        }
    }

    public func threadMessages(_ event: Event, limit: Int) async -> [String] {
        guard let root = event.thread else { return [] }
        do throws(MatrixAPIError) {
            let first = try await api.event(room: event.channel, id: root)
            let rest = try await api.threadEvents(room: event.channel, root: root, limit: limit)
            return ([first] + rest).prefix(limit).compactMap { item in
                guard item.type == "m.room.message", item.content.body?.isEmpty == false, let text = item.text else { return nil }
                return item.sender.map { "\(MatrixID.localpart(of: $0)): \(text)" } ?? text
            }
        } catch {
            logger.notice("matrix: could not read a thread", metadata: ["reason": "\(error.reason)"])
            return []
        }
    }
}
