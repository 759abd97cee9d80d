import Logging
import RelayCore
import RelayPipeline
import RelayPlatform

/// What the adapter does with each timeline event: a command or a mention becomes an `Event` and
/// a `MatrixAddress` handed to the relay's inbox; the tribunal reaction runs `/tribunal` on its
/// message, and 👍/👎 on a fact-check marks it. Invitations are joined (or declined), and an
/// encrypted room is told once that the bot cannot read it. Never waits for a model: answers
/// follow through the outbox.
///
/// The dedupe key of everything it submits is the event's id, so a batch synced again after a
/// crash runs once.
struct MatrixInbound: Sendable {
    let inbox: any RelayInbox
    let api: any MatrixAPI
    let identity: MatrixIdentity
    let encryption: MatrixEncryptedRooms
    let configuration: MatrixConfiguration
    let logger: Logger

    /// Handles one timeline event of `room`. Throws only when something to run could not be
    /// stored: the syncer then asks for the batch again.
    func handle(_ event: MatrixEvent, room: String, me: String) async throws {
        guard let id = event.id, let sender = event.sender, sender != me else { return }
        guard await !encryption.isEncrypted(room) else { return }
        switch event.type {
        case "m.room.message":
            try await message(event, id: id, sender: sender, room: room, me: me)
        case "m.reaction":
            try await reaction(event, id: id, sender: sender, room: room, me: me)
        case "m.room.redaction":
            // A command (or a reaction that ran one) redacted before its answer: not answered.
            if let target = event.redacts { try await inbox.withdraw(platform: MatrixPlatform.name, message: target) }
        default:
            return
        }
    }

    // MARK: - Messages

    private func message(_ event: MatrixEvent, id: String, sender: String, room: String, me: String) async throws {
        let content = event.content
        let relation = content.relation
        // Only what people type or record: not other bots' notices (which must never be answered,
        // so bots cannot loop), not edits (the command already ran), not images or other files.
        let audio = MatrixAudio(content: content, origin: .own)
        guard relation?.relType != "m.replace", audio != nil || content.msgtype == "m.text" else { return }
        let thread = relation?.relType == "m.thread" ? relation?.eventID : nil
        let team = MatrixAddress.team(room: room)
        let address = MatrixAddress(team: team, room: room, user: sender, replyTo: id, thread: thread)
        let mention = await self.mention(of: me, in: content)
        if let audio {
            try await voiceNote(audio, content: content, id: id, sender: sender, room: room, address: address, mention: mention, me: me)
            return
        }
        guard let rawBody = content.body else { return }
        let repliedID = relation?.replyTo
        let body = repliedID == nil ? rawBody : MatrixText.withoutReplyFallback(rawBody)
        guard var line = MatrixCommandLine.line(body, mention: mention, isReply: repliedID != nil) else { return }
        var repliedTo: String?
        var unreadableReply: String?
        var voice: VoiceClip?
        // In a thread, clients set `m.in_reply_to` to the latest event as a fallback: only a
        // reply the person chose (`is_falling_back` false) is one.
        let chosenReply = thread == nil || relation?.isFallingBack != true
        var replied: MatrixEvent?
        if let repliedID, chosenReply {
            switch await self.event(repliedID, room: room) {
            case .read(let event): replied = event
            case .hidden: unreadableReply = Self.hiddenReply
            case .failed: break
            }
        }
        if let replied {
            switch MatrixAudio(content: replied.content, origin: .repliedTo) {
            case .clip(let clip)?:
                // A voice note's body is its file name (or a caption): its words are what counts.
                voice = clip
                // The bot's name alone, as a reply to a voice note: what `/settings voice` asks for.
                if MatrixCommandLine.words(afterMentionIn: body, mention: mention)?.isEmpty == true { line = "" }
            case .encrypted?:
                try await answerOnce(MatrixAudio.encryptedReply, to: id, address: address)
                return
            case nil:
                repliedTo = replied.text
            }
        }
        let relayEvent = Event(
            platform: MatrixPlatform.name, team: team, channel: room, thread: thread, user: sender, userName: MatrixID.localpart(of: sender), text: line,
            repliedTo: repliedTo, eventKey: "event:\(id)", voice: voice, unreadableReply: unreadableReply, sourceMessage: id,
            // A pill shows a display name; `m.mentions` says whom it is.
            mentions: content.mentionedUsers.filter { $0 != me && MatrixID.isUser($0) }.map { MentionedUser(shown: $0, id: $0) })
        try await submit(relayEvent, address: address)
    }

    /// A voice note of its own: run when it is addressed to the bot — a caption with a command
    /// or a mention (spec v1.10 captions) — or sent in a direct room where the bot is the only
    /// other member, where it gets what `/settings voice` asks for. In other rooms a voice note
    /// nobody addressed to the bot is left alone, unfetched.
    private func voiceNote(
        _ audio: MatrixAudio, content: MatrixContent, id: String, sender: String, room: String, address: MatrixAddress, mention: MatrixMention, me: String
    ) async throws {
        var line: String?
        if let caption = MatrixAudio.caption(of: content) {
            line =
                MatrixCommandLine.words(afterMentionIn: caption, mention: mention)?.isEmpty == true
                ? "" : MatrixCommandLine.line(caption, mention: mention, isReply: false)
        }
        if line == nil, await isDirect(room) { line = "" }
        guard let line else { return }
        guard case .clip(let clip) = audio else {
            try await answerOnce(MatrixAudio.encryptedReply, to: id, address: address)
            return
        }
        let relayEvent = Event(
            platform: MatrixPlatform.name, team: address.team, channel: room, thread: address.thread, user: sender,
            userName: MatrixID.localpart(of: sender), text: line, eventKey: "event:\(id)", voice: clip, sourceMessage: id)
        try await submit(relayEvent, address: address)
    }

    /// Whether `room` is the bot's and one person's alone; false when the homeserver cannot say.
    private func isDirect(_ room: String) async -> Bool {
        do throws(MatrixAPIError) {
            return try await api.joinedMemberCount(room: room) == 2
        } catch {
            logger.notice("matrix: could not count a room's members", metadata: ["reason": "\(error.reason)"])
            return false
        }
    }

    /// How `content` mentions the bot.
    private func mention(of me: String, in content: MatrixContent) async -> MatrixMention {
        let known = await identity.current()
        return MatrixMention(user: me, displayName: known?.displayName, mentionedUsers: content.mentionedUsers, formattedBody: content.formattedBody)
    }

    /// An answer that needs no run (the relay cannot read what was asked about), queued once
    /// per event however often a sync brings the event again.
    private func answerOnce(_ text: String, to id: String, address: MatrixAddress) async throws {
        _ = try await inbox.post(.error(text), route: address.route, onceAs: "matrix:answer:\(id)", replacing: nil)
    }

    /// An event, as far as the bot may read it.
    private enum Fetched {
        case read(MatrixEvent)
        /// The homeserver will not show it to the bot: sent before the bot could see the room's
        /// history (`history_visibility: joined` or `invited`), or the bot is not in the room.
        /// The spec answers both with 403 or 404 (Synapse: 404 "Could not find event").
        case hidden
        /// Anything else (unreachable, 5xx): the command runs without it.
        case failed
    }

    /// What a command replying to a message the bot may not read is told, when it needed that
    /// message's text (issue 47, point 7).
    static let hiddenReply = "I can't read that message in this room (history visibility)."

    private func event(_ eventID: String, room: String) async -> Fetched {
        do throws(MatrixAPIError) {
            return .read(try await api.event(room: room, id: eventID))
        } catch {
            logger.notice("matrix: could not read the message a command replies to", metadata: ["reason": "\(error.reason)"])
            if case .refused(_, let refusal) = error, refusal.status == 403 || refusal.status == 404 { return .hidden }
            return .failed
        }
    }

    /// Submits `event`; a refusal for being one too many is answered at once. ("typing…" is the
    /// deliverer's, from the run's start to its answer.)
    private func submit(_ event: Event, address: MatrixAddress) async throws {
        let submission = try await inbox.submit(event, route: address.route)
        if let busy = submission.busyMessage {
            try? await inbox.post(.error(busy), route: address.route)
        }
    }

    // MARK: - Reactions

    private func reaction(_ event: MatrixEvent, id: String, sender: String, room: String, me: String) async throws {
        guard let relation = event.content.relation, relation.relType == "m.annotation", let target = relation.eventID, let key = relation.key
        else { return }
        let team = MatrixAddress.team(room: room)
        let address = MatrixAddress(team: team, room: room, user: sender, replyTo: target)
        var line: String?
        var repliedTo: String?
        var voice: VoiceClip?
        if MatrixText.bare(key) == MatrixText.bare(configuration.tribunalReaction) {
            let fetched = await self.event(target, room: room)
            guard case .read(let reacted) = fetched, let text = reacted.text else {
                let why: String
                if case .hidden = fetched {
                    why = Self.hiddenReply + " Copy its text after !tribunal instead."
                } else {
                    why = "I cannot read that message (it may be encrypted or gone). Reply to it with !tribunal instead."
                }
                try? await inbox.post(.error(why), route: address.route)
                return
            }
            line = "/tribunal"
            // On a voice message, what was said is the claim, not the file's name.
            switch MatrixAudio(content: reacted.content, origin: .repliedTo) {
            case .clip(let clip)?: voice = clip
            case .encrypted?: return try await answerOnce(MatrixAudio.encryptedReply, to: id, address: address)
            case nil: repliedTo = text
            }
        } else if let right = LedgerReference.mark(fromEmoji: key) {
            guard let reacted = try? await api.event(room: room, id: target), reacted.sender == me, let body = reacted.content.body,
                let ledger = LedgerReference.id(in: body)
            else { return }
            line = LedgerReference.markCommand(ledger, right: right)
        }
        guard let line else { return }
        let relayEvent = Event(
            platform: MatrixPlatform.name, team: team, channel: room, user: sender, userName: MatrixID.localpart(of: sender), text: line,
            repliedTo: repliedTo, eventKey: "event:\(id)", voice: voice, sourceMessage: id)
        try await submit(relayEvent, address: address)
    }

    // MARK: - Rooms

    /// Accepts an invitation (from an allowed server) or declines it. False when the homeserver
    /// could not be reached (the batch is asked for again); a refusal is final.
    func invited(to room: String, state: [MatrixEvent], me: String) async -> Bool {
        let invite = state.last { $0.type == "m.room.member" && $0.stateKey == me }
        let inviter = invite?.sender
        let accept = configuration.acceptsInvite(from: inviter)
        do throws(MatrixAPIError) {
            if accept { try await api.join(room: room) } else { try await api.leave(room: room) }
            logger.info(
                accept ? "matrix: joined a room on invitation" : "matrix: declined an invitation from a server not in MATRIX_ALLOWED_SERVERS",
                metadata: ["matrix.room": "\(room)", "matrix.inviter": "\(inviter ?? "?")"])
            return true
        } catch {
            logger.warning("matrix: could not answer an invitation", metadata: ["reason": "\(error.reason)"])
            return !error.isRetryable
        }
    }

    /// Says once, in the room, that the bot cannot read it: it does not do end-to-end encryption.
    /// Once for good: the outbox keeps the key.
    func encrypted(room: String) async {
        encryption.markEncrypted(room)
        let text =
            "This room is end-to-end encrypted, and Rhea Relay cannot read encrypted messages, so it will not answer here. "
            + "Invite it to a room without encryption (encryption is chosen when a room is made and cannot be turned off)."
        var notice = Reply.info(text, title: "Rhea Relay cannot read this room")
        notice.isPrivate = false
        let address = MatrixAddress(team: MatrixAddress.team(room: room), room: room, user: "")
        do {
            _ = try await inbox.post(notice, route: address.route, onceAs: "matrix:encrypted:\(room)", replacing: nil)
        } catch {
            logger.warning("matrix: could not queue the note about an encrypted room", metadata: ["error": "\(error)"])
        }
    }
}
